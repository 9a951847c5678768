package analyze

import (
	"bytes"
	"encoding/gob"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

// durationsSample returns n durations spread over six orders of
// magnitude, a tenth of them 0, as times to recover are (a device back
// at once, or after hours).
func durationsSample(n int, seed uint64) []time.Duration {
	r := rand.New(rand.NewPCG(seed, 1))
	xs := make([]time.Duration, n)
	for i := range xs {
		if r.IntN(10) > 0 {
			xs[i] = time.Duration(math.Exp(r.Float64()*14) * float64(time.Millisecond))
		}
	}
	return xs
}

// Up to ExactDurations values a Durations is exact; beyond, every
// percentile is within DurationsAccuracy of the nearest-rank one, the
// maximum is exact, and so is how many values it holds.
func TestDurationsAccuracy(t *testing.T) {
	for _, n := range []int{1, 7, 1000, ExactDurations, ExactDurations + 1, 3 * ExactDurations} {
		xs := durationsSample(n, uint64(n))
		d := DurationsOf(xs...)
		slices.Sort(xs)
		if d.Len() != n || d.Exact() != (n <= ExactDurations) || d.Max() != xs[n-1] {
			t.Fatalf("n=%d: Len %d, Exact %v, Max %v; want %d, %v, %v", n, d.Len(), d.Exact(), d.Max(), n, n <= ExactDurations, xs[n-1])
		}
		for _, p := range []float64{0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 1} {
			got, want := d.Rank(p), rank(xs, p)
			tol := time.Duration(0)
			if !d.Exact() {
				tol = time.Duration(math.Ceil(DurationsAccuracy*float64(want))) + 1 // +1: rounded to a nanosecond
			}
			if (got - want).Abs() > tol {
				t.Errorf("n=%d: p%v = %v, exactly %v: off by more than %v", n, p*100, got, want, tol)
			}
		}
		var sum, sq float64
		for _, x := range xs {
			sum, sq = sum+x.Seconds(), sq+x.Seconds()*x.Seconds()
		}
		if f, want := d.Fairness(), sum*sum/(float64(n)*sq); math.Abs(f-want) > 4*DurationsAccuracy*want {
			t.Errorf("n=%d: Fairness %v, exactly %v", n, f, want)
		}
		for k := 1; k < n; k += 1 + n/500 {
			if d.At(k) < d.At(k-1) {
				t.Fatalf("n=%d: At(%d) = %v below At(%d) = %v", n, k, d.At(k), k-1, d.At(k-1))
			}
		}
	}
}

// A Durations merged from parts, in any order and any cut, some parts
// exact and some sketches, is the Durations of all the values: equal
// figures and equal encodings.
func TestDurationsMerge(t *testing.T) {
	xs := durationsSample(2*ExactDurations+500, 3)
	want := DurationsOf(xs...)
	for _, cuts := range [][]int{{10}, {ExactDurations - 5, ExactDurations + 20}, {ExactDurations + 1}, {100, 200, 2 * ExactDurations}} {
		var parts []Durations
		lo := 0
		for _, c := range append(cuts, len(xs)) {
			var p Durations
			for _, x := range xs[lo:c] {
				p.Add(x)
			}
			parts, lo = append(parts, roundTrip(t, &p)), c
		}
		for _, order := range [][]int{identity(len(parts)), reversed(len(parts))} {
			var got Durations
			for _, i := range order {
				got.Merge(&parts[i])
			}
			got.Sort()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("cuts %v, order %v: merged %+v, want %+v", cuts, order, got, want)
			}
		}
	}
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func reversed(n int) []int {
	out := identity(n)
	slices.Reverse(out)
	return out
}

// roundTrip returns d after encoding and decoding it.
func roundTrip(t *testing.T, d *Durations) Durations {
	t.Helper()
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(d); err != nil {
		t.Fatal(err)
	}
	var out Durations
	if err := gob.NewDecoder(&b).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A decoded Durations is one GobEncode could have written: no bin of a
// value no duration has (which would cost memory by its index), no count
// that does not add up.
func TestDurationsDecodeRefuses(t *testing.T) {
	lo, hi := durationsMapping.Index(1), durationsMapping.Index(math.MaxInt64)
	for name, w := range map[string]durationsWire{
		"a bin below 1 ns":      {Sketch: true, N: ExactDurations + 1, Bins: []int32{int32(lo - 1)}, Counts: []int64{ExactDurations + 1}},
		"a bin above MaxInt64":  {Sketch: true, N: ExactDurations + 1, Bins: []int32{int32(hi + 1)}, Counts: []int64{ExactDurations + 1}},
		"counts that miss":      {Sketch: true, N: ExactDurations + 2, Bins: []int32{int32(lo)}, Counts: []int64{ExactDurations + 1}},
		"a negative count":      {Sketch: true, N: ExactDurations + 1, Zeros: ExactDurations + 2, Bins: []int32{int32(lo)}, Counts: []int64{-1}},
		"a sketch of few":       {Sketch: true, N: 1, Bins: []int32{int32(lo)}, Counts: []int64{1}},
		"bins without a sketch": {N: 1, Bins: []int32{int32(lo)}, Counts: []int64{1}},
		"values miscounted":     {N: 2, Vals: []time.Duration{1}},
	} {
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(&w); err != nil {
			t.Fatal(err)
		}
		var d Durations
		if err := d.GobDecode(b.Bytes()); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// A split check whose times to recover are sketched (ExactDurations
// lowered for the test) gives what Check gives: the same estimates, the
// same starvation bound from them, and KeepRecovered still drops only
// devices that could not be reported.
func TestSplitSameAsCheckSketched(t *testing.T) {
	defer func(n int) { exactDurations = n }(exactDurations)
	exactDurations = 50
	cfg := simulate.Config{Devices: 400, Outage: time.Minute, Seed: 9, Policy: *declaredPreset(t, "fixed", ""), BadAuth: 0.05, Capacity: 40,
		Flaps: 1, FlapUp: 3 * time.Second, FlapDown: 10 * time.Second}
	flat, _ := simDataset(t, cfg)
	src := filepath.Join(filepath.Dir(flat), "sim.ndjson")
	pruned := prunedDevices
	res := sameResult(t, bucketed(t, 5, src), Options{})
	if st := res.Summary.Fleet; st.TTR.Exact() || st.TTR.Len() <= 50 {
		t.Fatalf("%d times to recover, exact %v: the sketch is not tested", st.TTR.Len(), st.TTR.Exact())
	}
	if prunedDevices == pruned {
		t.Error("KeepRecovered dropped no device: the bound with estimates is not tested")
	}
	sketched := 0
	for _, in := range res.Summary.Fleet.Incidents {
		if !in.TTR.Exact() {
			sketched++
		}
	}
	if sketched == 0 {
		t.Error("no incident's times to recover were sketched: their merge is not tested")
	}
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// Decoding never panics, and what it accepts encodes to a Durations of
// the same figures.
func FuzzDurationsDecode(f *testing.F) {
	for _, n := range []int{0, 3, ExactDurations + 5} {
		d := DurationsOf(durationsSample(n, 1)...)
		b, err := d.GobEncode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Durations
		if d.GobDecode(b) != nil {
			return
		}
		d.Sort()
		again := roundTrip(t, &d)
		again.Sort()
		for _, p := range []float64{0.5, 0.99, 1} {
			if d.Rank(p) != again.Rank(p) || d.Len() != again.Len() {
				t.Fatalf("p%v: %v, after a round trip %v", p*100, d.Rank(p), again.Rank(p))
			}
		}
	})
}
