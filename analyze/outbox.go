package analyze

import (
	"maps"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

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
// record reports (the log ends, or no later record carries
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

// flushCounter counts the messages the fleet flushed, per second (the
// unit the broker's load is judged in, whatever window the socket-opens
// are counted in).
type flushCounter struct {
	Total   int64
	Seconds map[int64]int64 // second -> messages
}

func (fc *flushCounter) add(d *Device) {
	d.Flushes(func(_ int, at, n int64) {
		if fc.Seconds == nil {
			fc.Seconds = map[int64]int64{}
		}
		s := floorDiv(at, int64(time.Second))
		fc.Seconds[s] = addSat(fc.Seconds[s], n)
		fc.Total = addSat(fc.Total, n)
	})
}

// stats fills in the flush figures of st: the total, the count per second
// and the peaks, the fleet's and each incident's (from its loss's second
// to the next incident's).
func (fc *flushCounter) stats(st *FleetStats) {
	st.Flushed = fc.Total
	if len(fc.Seconds) == 0 {
		return
	}
	secs := slices.Sorted(maps.Keys(fc.Seconds))
	lo, hi := secs[0], secs[len(secs)-1]
	st.FlushFirst = lo * int64(time.Second)
	if hi-lo < MaxWindows {
		st.FlushPerSecond = make([]int64, hi-lo+1)
	}
	for _, s := range secs {
		n := fc.Seconds[s]
		if st.FlushPerSecond != nil {
			st.FlushPerSecond[s-lo] = n
		}
		if n > st.FlushPeak {
			st.FlushPeak, st.FlushPeakAt = n, s*int64(time.Second)
		}
	}
	for k := range st.Incidents {
		in := &st.Incidents[k]
		i, _ := slices.BinarySearch(secs, floorDiv(in.LostAt, int64(time.Second)))
		for ; i < len(secs) && (k+1 == len(st.Incidents) || secs[i] < floorDiv(st.Incidents[k+1].LostAt, int64(time.Second))); i++ {
			if n := fc.Seconds[secs[i]]; n > in.FlushPeak {
				in.FlushPeak, in.FlushPeakAt = n, secs[i]*int64(time.Second)
			}
		}
	}
}
