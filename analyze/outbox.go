package analyze

import (
	"cmp"
	"maps"
	"math"
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

// Redeliveries calls fn with the messages the broker redelivered to d
// (inbound_redelivered), placed in time as Flushes places a flush: i is
// the index in d.Events of the record that says so, at when they are
// placed and n how many (n > 0). A record's inbound_redelivered counts
// the messages received since the device's previous record; they are
// placed at that previous record, the earliest they could have come,
// which for the first record after a connect is the connect: a broker
// sends a resumed session its queue as soon as the session is up. The
// first record of a device is placed at itself.
func (d *Device) Redeliveries(fn func(i int, at, n int64)) {
	for i := range d.Events {
		if n := d.Events[i].Redelivered; n > 0 {
			at := d.Events[i].At
			if i > 0 {
				at = d.Events[i-1].At
			}
			fn(i, at, n)
		}
	}
}

// secondCounter counts messages placed in time per second (the unit the
// broker's load is judged in, whatever window the socket-opens are
// counted in): the outbox flush, the broker's redeliveries.
type secondCounter struct {
	Total   int64
	Seconds map[int64]int64 // second -> messages
}

// add counts n messages placed at at.
func (sc *secondCounter) add(_ int, at, n int64) {
	if sc.Seconds == nil {
		sc.Seconds = map[int64]int64{}
	}
	s := floorDiv(at, int64(time.Second))
	sc.Seconds[s] = addSat(sc.Seconds[s], n)
	sc.Total = addSat(sc.Total, n)
}

func (sc *secondCounter) merge(next *secondCounter) {
	sc.Total = addSat(sc.Total, next.Total)
	sc.Seconds = addCounts(sc.Seconds, next.Seconds)
}

// messages are the figures of messages placed in time, per second: the
// total, the first second with some and the count per second from there
// (nil when there were none, or they span more than MaxWindows seconds),
// and the most in one second and its start (0 and NoTime when none).
// Sums saturate at MaxInt64.
type messages struct {
	Total     int64
	First     int64
	PerSecond []int64
	Peak      int64
	PeakAt    int64
}

// peak is the most messages in one whole second, at its start; 0 and
// NoTime when there were none.
type peak struct{ n, at int64 }

// stats returns the figures of the fleet, and the peak of each incident
// of incs (from its loss's second to the next incident's).
func (sc *secondCounter) stats(incs []Incident) (messages, []peak) {
	m := messages{Total: sc.Total, PeakAt: NoTime}
	peaks := make([]peak, len(incs))
	for k := range peaks {
		peaks[k].at = NoTime
	}
	if len(sc.Seconds) == 0 {
		return m, peaks
	}
	secs := slices.Sorted(maps.Keys(sc.Seconds))
	lo, hi := secs[0], secs[len(secs)-1]
	m.First = lo * int64(time.Second)
	if hi-lo < MaxWindows {
		m.PerSecond = make([]int64, hi-lo+1)
	}
	for _, s := range secs {
		n := sc.Seconds[s]
		if m.PerSecond != nil {
			m.PerSecond[s-lo] = n
		}
		if n > m.Peak {
			m.Peak, m.PeakAt = n, s*int64(time.Second)
		}
	}
	for k := range incs {
		i, _ := slices.BinarySearch(secs, floorDiv(incs[k].LostAt, int64(time.Second)))
		for ; i < len(secs) && (k+1 == len(incs) || secs[i] < floorDiv(incs[k+1].LostAt, int64(time.Second))); i++ {
			if n := sc.Seconds[secs[i]]; n > peaks[k].n {
				peaks[k] = peak{n, secs[i] * int64(time.Second)}
			}
		}
	}
	return m, peaks
}

// messageStats fills in the flush and redelivery figures of st, the
// fleet's and each incident's.
func (fc *fleetCounter) messageStats(st *FleetStats) {
	f, fp := fc.Flush.stats(st.Incidents)
	st.Flushed, st.FlushFirst, st.FlushPerSecond = f.Total, f.First, f.PerSecond
	if f.Peak > 0 {
		st.FlushPeak, st.FlushPeakAt = f.Peak, f.PeakAt
	}
	r, rp := fc.Redel.stats(st.Incidents)
	st.Redelivered, st.RedeliveryFirst, st.RedeliveryPerSecond = r.Total, r.First, r.PerSecond
	if r.Peak > 0 {
		st.RedeliveryPeak, st.RedeliveryPeakAt = r.Peak, r.PeakAt
	}
	for k := range st.Incidents {
		in := &st.Incidents[k]
		if fp[k].n > 0 {
			in.FlushPeak, in.FlushPeakAt = fp[k].n, fp[k].at
		}
		if rp[k].n > 0 {
			in.RedeliveryPeak, in.RedeliveryPeakAt = rp[k].n, rp[k].at
		}
	}
}

// placedWithin returns the messages of fs, sorted by time, placed in
// [from, until).
func placedWithin(fs []flushAt, from, until int64) []flushAt {
	i, _ := slices.BinarySearchFunc(fs, from, func(f flushAt, t int64) int { return cmp.Compare(f.At, t) })
	fs = fs[i:]
	if j := slices.IndexFunc(fs, func(f flushAt) bool { return f.At >= until }); j >= 0 {
		fs = fs[:j]
	}
	return fs
}

// busiest is the busiest second of messages placed in time.
type busiest struct {
	total, observed int64 // messages in all, and in the busiest window
	at              int64 // that window's start
	devices         int   // devices with messages in it
	refs            []Ref // the records of its messages, up to MaxRefs
}

// busiestSecond finds the busiest [t, t + StormWindow) starting at a
// placement of fs, sorted by time.
func busiestSecond(fs []flushAt) busiest {
	var b busiest
	w := int64(StormWindow)
	var sum int64
	for lo, hi := 0, 0; lo < len(fs); lo++ {
		for ; hi < len(fs) && fs[hi].At < addSat(fs[lo].At, w); hi++ {
			sum += fs[hi].N
		}
		if sum > b.observed {
			b.observed, b.at = sum, fs[lo].At
		}
		sum -= fs[lo].N
		b.total += fs[lo].N
	}
	devs := map[int32]bool{}
	for _, f := range fs {
		if f.At >= b.at && f.At < b.at+w {
			devs[f.Dev] = true
			if len(b.refs) < MaxRefs {
				b.refs = append(b.refs, f.Ref)
			}
		}
	}
	b.devices = len(devs)
	return b
}

// sortPlaced sorts messages placed in time by time, then by the line of
// their record.
func sortPlaced(fs []flushAt) {
	slices.SortFunc(fs, func(a, b flushAt) int { return cmp.Or(cmp.Compare(a.At, b.At), compareLines(a.Ref, b.Ref)) })
}

// recoveries calls fn with each incident of incs that has a first
// connect, and the next incident's lost_at (MaxInt64 for the last): the
// stretch its recovery's messages are placed in.
func recoveries(incs []Incident, fn func(in *Incident, next int64)) {
	for k := range incs {
		if incs[k].FirstConnectAt == NoTime {
			continue
		}
		next := int64(math.MaxInt64)
		if k+1 < len(incs) {
			next = incs[k+1].LostAt
		}
		fn(&incs[k], next)
	}
}
