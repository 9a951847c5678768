package analyze

import (
	"fmt"
	"slices"
	"time"
)

// The busiest second of connects after each incident
// (Incident.ConnectsPeak) found apart, by shard of time, so that no
// worker holds every connect of the fleet. The finishing step counts
// each window of a second that starts at a connect, from the incident's
// first loss to the next incident's, on the fleet's clock (the clock
// corrections move a corrected device's connects with its losses). Split
// does the same in three steps: Infer records how each round of
// corrections moved which device's connects (connectMove) and sends each
// part its own; Detail moves the part's connects so and sends them by
// shard of connectShardSpan (a connect within a second of a shard's
// start goes to the shard before too, whose last windows reach it);
// Peaks, once a shard, finds each incident's busiest window starting in
// the shard's stretch; Partial.PutPeaks gives them to the finishing
// step, which takes each incident's largest, the earliest of equals:
// what counting over every connect finds. A shard a part sent to and no
// PutPeaks put is refused.

// connectShardSpan is the stretch of time of a shard of connects.
const connectShardSpan = int64(10 * time.Minute)

// peakWindow is the width of the windows ConnectsPeak counts.
const peakWindow = int64(time.Second)

// connectMove is how one round of clock corrections moved one device's
// connects: those in one of Windows, on the device's clock then (its
// earlier rounds' moves made), back by By.
type connectMove struct {
	Dev     int32
	Windows [][2]int64
	By      int64
}

// moveConnects moves the connects ts, of the devices devs, as moves (in
// round order) say: each connect by each of its device's moves in turn.
func moveConnects(ts []int64, devs []int32, moves []connectMove) {
	if len(moves) == 0 {
		return
	}
	byDev := map[int32][]int{} // each device's moves, in order
	for k, m := range moves {
		byDev[m.Dev] = append(byDev[m.Dev], k)
	}
	for i, d := range devs {
		for _, k := range byDev[d] {
			for _, w := range moves[k].Windows {
				if ts[i] >= w[0] && ts[i] <= w[1] {
					ts[i] -= moves[k].By
					break
				}
			}
		}
	}
}

// connectShard is what Detail sends of one part's connects to a shard:
// them, and the incidents whose stretch meets the shard's.
type connectShard struct {
	Shard int64
	Incs  []incidentRange
	Times []int64
}

// incidentRange is an incident's stretch of connects: from its first
// loss to the next incident's (To NoTime for the last).
type incidentRange struct {
	Inc      int32
	From, To int64
}

// peaksOf is what Peaks returns of a shard: the busiest window of each
// incident starting in its stretch, where it has one.
type peaksOf struct {
	Shard int64
	Peaks []incidentPeak
}

// incidentPeak is an incident's busiest window of connects.
type incidentPeak struct {
	Inc int32
	N   int
	At  int64
}

// connectShards returns the connects ts (on the fleet's clock) by shard,
// encoded, with the incidents whose stretch meets each shard's; from
// holds each incident's first loss, in the incidents' order (an estimate
// may put one before the one before it). A connect no incident's
// windows can start at or reach goes nowhere.
func connectShards(ts []int64, from []int64) (map[int64][]byte, error) {
	if len(from) == 0 {
		return nil, nil
	}
	first := slices.Min(from)
	by := map[int64][]int64{}
	for _, t := range ts {
		if t < first {
			continue // before every incident: no window counts it
		}
		k := floorDiv(t, connectShardSpan)
		by[k] = append(by[k], t)
		if t-k*connectShardSpan < peakWindow && k*connectShardSpan > first {
			by[k-1] = append(by[k-1], t) // the last windows of the shard before reach it
		}
	}
	out := map[int64][]byte{}
	for k, times := range by {
		c := connectShard{Shard: k, Times: times}
		for i, f := range from {
			r := incidentRange{Inc: int32(i), From: f, To: NoTime}
			if i+1 < len(from) {
				r.To = from[i+1]
			}
			if r.lo(k) < r.hi(k) {
				c.Incs = append(c.Incs, r)
			}
		}
		if len(c.Incs) == 0 {
			continue // an overlap only, of a shard no incident's windows start in
		}
		b, err := encode(&c)
		if err != nil {
			return nil, err
		}
		out[k] = b
	}
	return out, nil
}

// lo and hi bound the starts of r's windows in shard k: [lo, hi).
func (r incidentRange) lo(k int64) int64 { return max(r.From, k*connectShardSpan) }

func (r incidentRange) hi(k int64) int64 {
	if r.To == NoTime {
		return (k + 1) * connectShardSpan
	}
	return min(r.To, (k+1)*connectShardSpan)
}

// Peaks finds, of the connects every part sent to one shard (Detail),
// the busiest window of each incident that starts in the shard's
// stretch, and returns them, encoded, for PutPeaks.
func (s *Split) Peaks(shard [][]byte) ([]byte, error) {
	var ts []int64
	var c connectShard
	for i, b := range shard {
		var next connectShard
		if err := decode(b, &next); err != nil {
			return nil, fmt.Errorf("%s: connects of a shard: %w", s.dir, err)
		}
		if i > 0 && (next.Shard != c.Shard || !slices.Equal(next.Incs, c.Incs)) {
			return nil, fmt.Errorf("%s: connects of shards %d and %d, or of other incidents, in one shard", s.dir, c.Shard, next.Shard)
		}
		c, ts = next, append(ts, next.Times...)
	}
	slices.Sort(ts)
	out := peaksOf{Shard: c.Shard}
	for _, r := range c.Incs {
		if n, at := peakPerWindow(ts, r.lo(c.Shard), r.hi(c.Shard), peakWindow); n > 0 {
			out.Peaks = append(out.Peaks, incidentPeak{Inc: r.Inc, N: n, At: at})
		}
	}
	return encode(&out)
}

// PutPeaks gives the partial a shard's busiest windows, as Peaks
// returned them: the finishing step takes each incident's largest from
// the partials they were put in (one partial may hold them all).
func (p *Partial) PutPeaks(b []byte) error {
	ic := &p.k.fc.Inc
	if !p.incidentsTaken {
		return fmt.Errorf("partial of part %d: its incidents were not taken apart", p.part)
	}
	var o peaksOf
	if err := decode(b, &o); err != nil {
		return fmt.Errorf("partial of part %d: the busiest windows of a shard: %w", p.part, err)
	}
	ic.PeaksOf = append(ic.PeaksOf, o.Shard)
	ic.Peaks = append(ic.Peaks, o.Peaks...)
	return nil
}

// peaksHeld reports an error unless the busiest windows of every shard a
// part sent connects to were put back, once, each of one of the n
// incidents.
func (ic *incidentCounter) peaksHeld(n int) error {
	sent, put := slices.Clone(ic.PeakShards), slices.Clone(ic.PeaksOf)
	slices.Sort(sent)
	slices.Sort(put)
	if sent = slices.Compact(sent); !slices.Equal(sent, put) {
		return fmt.Errorf("the busiest windows of the shards of connects %v put back, expected those of %v, each once (Peaks, PutPeaks)", put, sent)
	}
	for _, pk := range ic.Peaks {
		if pk.Inc < 0 || int(pk.Inc) >= n || pk.N <= 0 {
			return fmt.Errorf("a busiest window of incident %d of %d, of %d connects", pk.Inc+1, n, pk.N)
		}
	}
	return nil
}

// setPeaks sets the busiest window of each of incs, found apart, from
// the shards' (peaksHeld checked them): the largest, the earliest of
// equals.
func (ic *incidentCounter) setPeaks(incs []Incident) {
	for k := range incs {
		incs[k].ConnectsPeak, incs[k].ConnectsPeakAt = 0, NoTime
	}
	for _, pk := range ic.Peaks {
		in := &incs[pk.Inc]
		if pk.N > in.ConnectsPeak || pk.N == in.ConnectsPeak && pk.At < in.ConnectsPeakAt {
			in.ConnectsPeak, in.ConnectsPeakAt = pk.N, pk.At
		}
	}
}
