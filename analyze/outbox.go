package analyze

import "github.com/stormaudit/stormaudit/auditfmt"

// Flushes calls fn with the messages d sent from its outbox, placed in
// time: i is the index in d.Events of the record that says so, at when
// they are placed and n how many (n > 0).
//
// A record's outbox_flushed counts the messages sent since the device's
// previous record; they are placed at that previous record, the earliest
// they could have gone, which for the first record after a connect is the
// connect: a device empties its outbox as soon as its session is up. (The
// log cannot show how a device paced its sending between two records, so
// this is the bunching's upper bound.) A session whose flush no later
// record reports (the log ends, or the next record carries no
// outbox_flushed before the next connect) flushes the backlog its
// connected record shows waiting (outbox_depth), placed at the connect.
// The first record of a device has no previous one: its outbox_flushed is
// placed at itself.
func (d *Device) Flushes(fn func(i int, at, n int64)) {
	pending := -1 // a connected record whose backlog no record has reported flushed yet
	for i := range d.Events {
		e := &d.Events[i]
		if e.Outcome == auditfmt.Connected && isSessionStage(e.Stage) {
			if pending >= 0 {
				fn(pending, d.Events[pending].At, d.Events[pending].Outbox)
			}
			pending = -1
			if e.Outbox > 0 {
				pending = i
			}
		}
		if e.Flushed < 0 || i == pending {
			continue
		}
		pending = -1
		if e.Flushed == 0 {
			continue
		}
		at := e.At
		if i > 0 {
			at = d.Events[i-1].At
		}
		fn(i, at, e.Flushed)
	}
	if pending >= 0 {
		fn(pending, d.Events[pending].At, d.Events[pending].Outbox)
	}
}

// flushCounter counts the messages the fleet flushed, per window.
type flushCounter struct {
	window  int64
	total   int64
	windows map[int64]int64 // window index -> messages
}

func (fc *flushCounter) add(d *Device) {
	d.Flushes(func(_ int, at, n int64) {
		if fc.windows == nil {
			fc.windows = map[int64]int64{}
		}
		fc.windows[floorDiv(at, fc.window)] += n
		fc.total += n
	})
}

// stats fills in the flush figures of st: the totals, the per-window
// counts and the peaks, the fleet's and each incident's (from its loss to
// the next incident's).
func (fc *flushCounter) stats(st *FleetStats) {
	st.Flushed = fc.total
	if len(fc.windows) == 0 {
		return
	}
	lo, hi := int64(1<<62), int64(-1<<62)
	for w, n := range fc.windows {
		lo, hi = min(lo, w), max(hi, w)
		if n > st.FlushPeak || n == st.FlushPeak && w*fc.window < st.FlushPeakAt {
			st.FlushPeak, st.FlushPeakAt = n, w*fc.window
		}
	}
	st.FlushFirst = lo * fc.window
	if hi-lo < MaxWindows {
		st.FlushPerWindow = make([]int64, hi-lo+1)
		for w, n := range fc.windows {
			st.FlushPerWindow[w-lo] = n
		}
	}
	for k := range st.Incidents {
		in := &st.Incidents[k]
		from, to := floorDiv(in.LostAt, fc.window), int64(1<<62)
		if k+1 < len(st.Incidents) {
			to = floorDiv(st.Incidents[k+1].LostAt, fc.window)
		}
		for w, n := range fc.windows {
			if w >= from && w < to && (n > in.FlushPeak || n == in.FlushPeak && w*fc.window < in.FlushPeakAt) {
				in.FlushPeak, in.FlushPeakAt = n, w*fc.window
			}
		}
	}
}
