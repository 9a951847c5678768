package analyze

import (
	"cmp"
	"slices"
	"sort"
	"time"
)

// OverlapSlack widens each pair's bound of an offset when the bounds are
// laid over each other to find a rough offset: the CONNACK's way to the
// device's log differs from one connect to the next.
const OverlapSlack = 25 * time.Millisecond

// LatencySlack is how far beyond its resolution an offset must lie to be
// reported and applied: the CONNACK's way to the device's log, which the
// bound does not include and no pairing can tell from a clock offset,
// takes up to that long on a loaded device (0.1 to 0.3 s for 200 Python
// clients reconnecting twice a second in the corpus).
const LatencySlack = 500 * time.Millisecond

// FineResolution is the least resolution claimed for an offset from
// finely stamped accepts: the CONNACK's way to the device's log.
const FineResolution = 10 * time.Millisecond

// MaxStepConnects bounds the connected records of a device that are
// searched for a clock step (brokerOffsets): a device that connected
// more often is judged by one offset.
const MaxStepConnects = 32

// brokerOffsets returns the offsets of d's clock against the broker's
// accepts acc: none when the clocks agree within what the evidence
// resolves; one for every record (see estimateOffset); or, when its
// connected records split in time into two runs that each agree on an
// offset and the two offsets differ by more than they resolve (a clock
// that stepped: an NTP fix between them), the offset of each run that is
// off, the first until the second run's first record, the second from
// it; and the offset of each of d's connected records (in its order). A
// step is looked for only when some records pair with no accept at
// the one offset, and taken only when the two runs pair every record and
// a run of one record is on the broker's time (a clock set right).
func brokerOffsets(d witnessDev, acc []BrokerEvent) ([]ClockOffset, []int64) {
	mk := func(off, res, at, until int64) ClockOffset {
		return ClockOffset{Device: d.ID, Offset: time.Duration(off), Resolution: time.Duration(res), LostAt: NoTime, Basis: BasisBroker,
			From: at, Until: until, dev: d.Dev, at: at}
	}
	off := func(o, r int64) bool { return abs64(o) > r+int64(LatencySlack) }
	cs := d.Conn // in the device's own order: a clock that steps back leaves its times out of order
	o, r, ok := estimateOffset(cs, acc)
	if n := len(cs); ok && n >= 2 && n <= MaxStepConnects && pairedAt(cs, acc, o) < n {
		// some records pair with no accept at the one offset: a step, if
		// two runs pair every record
		best, bestRes := -1, int64(1<<63-1)
		var o1, r1, o2, r2 int64
		for j := 1; j < n; j++ {
			a, ra, oka := estimateOffset(cs[:j], acc)
			b, rb, okb := estimateOffset(cs[j:], acc)
			// a run of one record is evidence only of a clock set right
			// (an NTP fix): one record pairing at a new offset away from
			// the broker's time is more likely an accept the log lacks
			single := j == 1 && off(a, ra) || j == n-1 && off(b, rb)
			if oka && okb && !single && abs64(a-b) > ra+rb+int64(LatencySlack) && ra+rb < bestRes &&
				pairedAt(cs[:j], acc, a)+pairedAt(cs[j:], acc, b) == n {
				best, bestRes, o1, r1, o2, r2 = j, ra+rb, a, ra, b, rb
			}
		}
		if best > 0 {
			// the clock is taken to step right after the first run's last
			// record (an NTP fix lands once the network is back): from the
			// device's next record on, whose stamp may lie before it
			step := cs[best-1] + 1
			if nx := d.Next[best-1]; nx != NoTime {
				step = min(step, nx)
			}
			var out []ClockOffset
			if off(o1, r1) {
				out = append(out, mk(o1, r1, NoTime, step))
			}
			if off(o2, r2) {
				out = append(out, mk(o2, r2, step, NoTime))
			}
			if len(out) > 0 {
				each := make([]int64, n) // by the records' order, which the stamps may not keep
				for j := range each {
					switch {
					case j < best && off(o1, r1):
						each[j] = o1
					case j >= best && off(o2, r2):
						each[j] = o2
					}
				}
				return out, each
			}
		}
	}
	each := make([]int64, len(cs))
	if ok && off(o, r) {
		for j := range each {
			each[j] = o
		}
		return []ClockOffset{mk(o, r, NoTime, NoTime)}, each
	}
	return nil, each // within what the evidence resolves: the clocks agree
}

// pairedAt counts the records cs (any order) that pair with an accept of
// acc when moved back by off (PairTolerance, as pair does).
func pairedAt(cs []int64, acc []BrokerEvent, off int64) int {
	n := 0
	match(slices.Sorted(slices.Values(cs)), acc, func(int64) int64 { return off }, int64(PairTolerance), func(k int, a *BrokerEvent) {
		if k >= 0 && a != nil {
			n++
		}
	})
	return n
}

// offsetSample is how many of a device's connected records (its first)
// its offset is estimated from.
const offsetSample = 256

// estimateOffset estimates a device's clock offset from its connected
// records and the broker's accepts (in time order; see judge); ok is
// false when no difference lies within MaxClockOffset.
func estimateOffset(conn []int64, acc []BrokerEvent) (off, res int64, ok bool) {
	cs := slices.Sorted(slices.Values(conn))
	if len(cs) > offsetSample {
		// contiguous, not spread: every k-th connect of a device that
		// reconnects on a period would make every lag look alike
		cs = cs[:offsetSample]
	}
	within := func(c, lo, hi int64) []BrokerEvent { // the accepts stamped in [c-hi, c-lo]
		i := sort.Search(len(acc), func(k int) bool { return acc[k].At >= c-hi })
		j := i
		for j < len(acc) && acc[j].At <= c-lo {
			j++
		}
		return acc[i:j]
	}
	// each pair (c, A) puts the offset in [c-A-r, c-A+l], widened by
	// OverlapSlack for the CONNACK's way to the log: the point the most
	// of those bounds hold is a rough offset
	type edge struct {
		at int64
		in int
	}
	var edges []edge
	fine := 0
	for _, c := range cs {
		for _, a := range within(c, -int64(MaxClockOffset), int64(MaxClockOffset)) {
			d := c - a.At
			edges = append(edges, edge{d - int64(a.Res) - int64(OverlapSlack), 1}, edge{d + int64(a.Late) + int64(OverlapSlack), -1})
		}
	}
	for _, a := range acc {
		if a.Res < time.Second/10 {
			fine++
		}
	}
	if len(edges) == 0 {
		return 0, 0, false
	}
	slices.SortFunc(edges, func(x, y edge) int { return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(y.in, x.in)) })
	n, best, rough, spread := 0, 0, int64(0), int64(0)
	for k, e := range edges {
		n += e.in
		if n > best && k+1 < len(edges) {
			best, rough, spread = n, e.at+(edges[k+1].at-e.at)/2, (edges[k+1].at-e.at)/2
		}
	}
	// pairs are taken within a second of rough for stamps of a second, within
	// 100 ms for finer ones, where the neighbouring connects of a device that
	// reconnects every half second lie outside
	width := int64(time.Second)
	if 2*fine > len(acc) {
		width = int64(time.Second / 10)
	}
	lo, least := int64(NoTime), int64(1<<63-1)
	var mid []time.Duration
	// the records, moved back by rough, paired with the accepts whose
	// [A, A+r) they fall in, widened by half the width and by half the
	// region rough is the middle of
	match(cs, acc, func(int64) int64 { return rough }, width/2+spread, func(k int, a *BrokerEvent) {
		if k < 0 || a == nil {
			return
		}
		d := cs[k] - a.At
		lo, least = max(lo, d-int64(a.Res)), min(least, d)
		mid = append(mid, time.Duration(d-int64(a.Res)/2))
	})
	if len(mid) == 0 {
		return rough, int64(time.Second), true
	}
	if lo <= least { // the stamps bound it: the middle
		return lo + (least-lo)/2, (least - lo) / 2, true
	}
	slices.Sort(mid)
	m := (mid[(len(mid)-1)/2] + mid[len(mid)/2]) / 2
	res = max(int64(rank(mid, 0.9)-rank(mid, 0.1))/2, int64(FineResolution))
	return int64(m), res, true
}
