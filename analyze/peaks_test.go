package analyze

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The busiest windows found by shard of time are those found over every
// connect, however the connects fall about the shards' edges and the
// incidents' starts (out of order too), equal times and ties included.
func TestPeaksByShardAsWhole(t *testing.T) {
	s := &Split{dir: "peaks"}
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		edge := (1 + r.Int64N(3)) * connectShardSpan // windows around a shard's edge
		var ts []int64
		for range 1 + r.IntN(200) {
			t := edge + r.Int64N(8*peakWindow) - 4*peakWindow
			if r.IntN(4) == 0 {
				t = edge - peakWindow + r.Int64N(3)*peakWindow/2 // on the edges of windows
			}
			ts = append(ts, t)
			if r.IntN(5) == 0 {
				ts = append(ts, t) // at the same time
			}
		}
		var from []int64 // the incidents' first losses: an estimate may put one before the one before
		at := edge - r.Int64N(3*peakWindow)
		for range 1 + r.IntN(3) {
			from = append(from, at)
			at += r.Int64N(3*peakWindow) - peakWindow/2
		}
		incs := make([]Incident, len(from))
		sorted := slices.Sorted(slices.Values(ts))
		for k := range incs {
			to := int64(NoTime)
			if k+1 < len(from) {
				to = from[k+1]
			}
			incs[k].ConnectsPeak, incs[k].ConnectsPeakAt = peakPerWindow(sorted, from[k], to, peakWindow)
		}
		// apart: the connects in two parts, each sharded, each shard's peaks found
		r.Shuffle(len(ts), func(i, j int) { ts[i], ts[j] = ts[j], ts[i] })
		cut := r.IntN(len(ts) + 1)
		shards := map[int64][][]byte{}
		for _, part := range [][]int64{ts[:cut], ts[cut:]} {
			by, err := connectShards(part, from)
			if err != nil {
				t.Fatal(err)
			}
			for k, b := range by {
				shards[k] = append(shards[k], b)
			}
		}
		var ic incidentCounter
		for k, shard := range shards {
			b, err := s.Peaks(shard)
			if err != nil {
				t.Fatal(err)
			}
			var o peaksOf
			if err := decode(b, &o); err != nil || o.Shard != k {
				t.Fatalf("seed %d: shard %d: %v, %d", seed, k, err, o.Shard)
			}
			ic.PeakShards, ic.PeaksOf, ic.Peaks = append(ic.PeakShards, k), append(ic.PeaksOf, o.Shard), append(ic.Peaks, o.Peaks...)
		}
		if err := ic.peaksHeld(len(incs)); err != nil {
			t.Fatal(err)
		}
		got := make([]Incident, len(incs))
		ic.setPeaks(got)
		for k := range incs {
			if got[k].ConnectsPeak != incs[k].ConnectsPeak || got[k].ConnectsPeakAt != incs[k].ConnectsPeakAt {
				t.Fatalf("seed %d, incident %d of %d: by shard %d at %d, over every connect %d at %d", seed, k, len(incs),
					got[k].ConnectsPeak, got[k].ConnectsPeakAt, incs[k].ConnectsPeak, incs[k].ConnectsPeakAt)
			}
		}
	}
}

// A shard's peaks must come back, each once, and a shard's connects be
// of one shard and one set of incidents.
func TestPeaksMustComeBack(t *testing.T) {
	s := &Split{dir: "peaks"}
	a, _ := connectShards([]int64{5, connectShardSpan + 5}, []int64{0})
	if len(a) != 2 {
		t.Fatalf("two shards' connects: %d shards", len(a))
	}
	if _, err := s.Peaks([][]byte{a[0], a[1]}); err == nil || !strings.Contains(err.Error(), "in one shard") {
		t.Errorf("two shards' connects in one: err = %v", err)
	}
	other, _ := connectShards([]int64{5}, []int64{0, 3})
	if _, err := s.Peaks([][]byte{a[0], other[0]}); err == nil || !strings.Contains(err.Error(), "other incidents") {
		t.Errorf("connects of other incidents in one shard: err = %v", err)
	}
	if _, err := s.Peaks([][]byte{[]byte("garbage")}); err == nil {
		t.Error("garbage connects: no error")
	}
	ic := incidentCounter{PeakShards: []int64{0, 1}, PeaksOf: []int64{0}}
	if err := ic.peaksHeld(1); err == nil || !strings.Contains(err.Error(), "expected those of [0 1]") {
		t.Errorf("a shard's peaks missing: err = %v", err)
	}
	ic = incidentCounter{PeakShards: []int64{0}, PeaksOf: []int64{0, 0}}
	if err := ic.peaksHeld(1); err == nil {
		t.Error("a shard's peaks twice: no error")
	}
	ic = incidentCounter{PeakShards: []int64{0}, PeaksOf: []int64{0}, Peaks: []incidentPeak{{Inc: 3, N: 1}}}
	if err := ic.peaksHeld(1); err == nil || !strings.Contains(err.Error(), "incident 4 of 1") {
		t.Errorf("a peak of no incident: err = %v", err)
	}
}
