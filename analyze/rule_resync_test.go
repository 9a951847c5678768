package analyze

import (
	"cmp"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// TestResyncSampleIncident checks the built-in sample: six of its 48
// devices copied a fixed 5 s timer, and resync must find exactly them.
func TestResyncSampleIncident(t *testing.T) {
	res := checkFiles(t, t.TempDir(), nil, filepath.Join("..", "testdata", "incident.ndjson"))
	fs := of(res, "resync")
	if len(fs) != 1 {
		t.Fatalf("got %d resync findings, want 1:%s", len(fs), describe(fs))
	}
	f := fs[0]
	if !strings.HasPrefix(f.Message, "6 of 48 devices retry in lockstep") {
		t.Errorf("message %q, want the six fixed-timer devices of 48", f.Message)
	}
	for _, want := range []string{"drew exactly 5.0 s", "dev-0041"} {
		if !strings.Contains(f.Explanation, want) {
			t.Errorf("explanation lacks %q: %s", want, f.Explanation)
		}
	}
	if len(f.Records) == 0 {
		t.Error("the finding names no records")
	}
}

// TestResyncCountsDevices pins what a lockstep group counts: devices, not
// timer fires, and attempt numbers, not groups. A fixed-timer fleet that
// flapped ten times (eleven fires per device at each attempt number) is
// still in lockstep; a jittered fleet whose immediate first retry fires
// together after every flap (attempt 0 only) is not.
func TestResyncCountsDevices(t *testing.T) {
	fixed := mustPreset(t, "fixed")
	res := checkSimulated(t, simulate.Config{Devices: 100, Outage: 20 * time.Second, Policy: fixed, Seed: 1,
		Flaps: 10, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second}, &fixed)
	if len(of(res, "resync")) != 1 {
		t.Errorf("fixed timer with 10 flaps: want one resync finding, got:%s", describe(of(res, "resync")))
	}
	ifr, err := policy.Parse("ifr.toml", []byte("delay = \"full_jitter\"\nbase_delay_s = 1.0\nmax_delay_s = 120.0\nmultiplier = 2.0\nimmediate_first_retry = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	res = checkSimulated(t, simulate.Config{Devices: 50, Outage: 30 * time.Second, Policy: ifr, Seed: 1,
		Flaps: 2, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second}, &ifr)
	if fs := of(res, "resync"); len(fs) > 0 {
		t.Errorf("jittered fleet with an immediate first retry and flaps: unexpected resync:%s", describe(fs))
	}
}

func mustPreset(t *testing.T, name string) policy.Policy {
	t.Helper()
	p, err := policy.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLockstepGroupsSketch: the sketch only drops fires that no group
// can hold, so the groups are those found without it, whether delays
// are shared, distinct, zero of either sign or NaN.
func TestLockstepGroupsSketch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shared := []float64{0, math.Copysign(0, -1), 1.5, 2.25, math.NaN()}
	found := 0
	for trial := range 50 {
		var fs []fire
		devices := 10 + rng.IntN(200)
		for dev := range devices {
			delay := rng.Float64() * 10 // almost surely its own
			if rng.IntN(3) > 0 {
				delay = shared[rng.IntN(len(shared))]
			}
			fs = append(fs, fire{Delay: delay, At: int64(rng.IntN(3)) * int64(40*time.Millisecond), Dev: int32(dev)})
		}
		sketch := new([resyncBuckets]uint32)
		for _, f := range fs {
			sketch[delayBucket(f.Delay)]++
		}
		r := newResync()
		want := r.lockstepGroups(2, slices.Clone(fs), nil)
		got := r.lockstepGroups(2, slices.Clone(fs), sketch)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: with the sketch %d groups %v, without %d groups %v", trial, len(got), got, len(want), want)
		}
		found += len(want)
	}
	if found == 0 {
		t.Fatal("no trial had a group: the test compares nothing")
	}
}

// candidates keeps the fires whose delay enough fires share, ordered by
// delay then time, ties as they came: by one radix key when their times
// span less than 2^47 ns, else by a comparison sort, alike.
func TestResyncCandidates(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	shared := []float64{0, math.Copysign(0, -1), 1.5, 2.25, math.NaN(), 7}
	for trial := range 40 {
		span := int64(time.Minute)
		if trial%2 == 1 {
			span = 1 << 60 // beyond the radix key's 2^47 ns
		}
		var fs []fire
		for dev := range 20 + rng.IntN(300) {
			delay := rng.Float64() * 10
			if rng.IntN(4) > 0 {
				delay = shared[rng.IntN(len(shared))]
			}
			fs = append(fs, fire{Delay: delay, At: rng.Int64N(span) - span/2, Dev: int32(dev)})
		}
		r := newResync()
		r.FireDevices[2] = len(fs)
		least := r.least(2)
		n := map[float64]int{}
		for _, f := range fs {
			n[f.Delay]++
		}
		var want []fire
		for _, f := range fs {
			if n[f.Delay] >= least {
				want = append(want, f)
			}
		}
		slices.SortStableFunc(want, func(x, y fire) int { return cmp.Or(cmp.Compare(x.Delay, y.Delay), cmp.Compare(x.At, y.At)) })
		got := r.candidates(2, slices.Clone(fs), nil)
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d candidates, want %d", trial, len(got), len(want))
		}
		for i := range got {
			if got[i].Dev != want[i].Dev || got[i].At != want[i].At {
				t.Fatalf("trial %d: candidate %d is %+v, want %+v", trial, i, got[i], want[i])
			}
		}
	}
}
