package analyze

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/brokerlog"
	"github.com/stormaudit/stormaudit/dataset"
)

// PairTolerance is how far, beyond its stamp's resolution, a device's
// connected record may lie from the broker's accept it answers (on the
// device's corrected clock): the CONNACK's way to the client and the
// client's way to its log.
const PairTolerance = 500 * time.Millisecond

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

// witnessCounter gathers, when a check has broker logs, each device's
// connected records: the audit's side of what the broker saw. It keeps
// 8 bytes per connected record and 24 per reference to one.
type witnessCounter struct {
	On   bool
	Devs []witnessDev
}

// witnessDev is one device's connected records (session stage), in its
// own order, and the span of its records.
type witnessDev struct {
	Dev  int32 // the device's ordinal, as incidentCounter's
	ID   string
	Conn []int64
	Refs []Ref
	// Next holds, for each of Conn, the time of the device's next record
	// in its own order (NoTime after its last): where a clock that stepped
	// back after a connect shows it first.
	Next        []int64
	First, Last int64
	// Ended holds when it recorded its session ended (disconnected,
	// attempt_failed or refused records of the session stage).
	Ended []int64
}

func (w *witnessCounter) add(d *Device, dev int32) {
	if !w.On || len(d.Events) == 0 {
		return
	}
	wd := witnessDev{Dev: dev, ID: strings.Clone(d.ID), First: d.Events[0].At, Last: d.Events[0].At}
	for i := range d.Events {
		e := &d.Events[i]
		wd.First, wd.Last = min(wd.First, e.At), max(wd.Last, e.At)
		if !isSessionStage(e.Stage) {
			continue
		}
		switch e.Outcome {
		case auditfmt.Connected:
			next := int64(NoTime)
			if i+1 < len(d.Events) {
				next = d.Events[i+1].At
			}
			wd.Conn, wd.Refs, wd.Next = append(wd.Conn, e.At), append(wd.Refs, e.Ref), append(wd.Next, next)
		case auditfmt.Disconnected, auditfmt.AttemptFailed, auditfmt.Refused:
			wd.Ended = append(wd.Ended, e.At)
		}
	}
	w.Devs = append(w.Devs, wd)
}

func (w *witnessCounter) merge(next *witnessCounter, devices int32) {
	for _, d := range next.Devs {
		d.Dev += devices
		w.Devs = append(w.Devs, d)
	}
}

// BrokerEvent is one event of a broker log, with the log it came from
// (an index into Witness.Logs) and how many identical events it stands
// for (at least 1: see BrokerLog).
type BrokerEvent struct {
	brokerlog.Event
	Log     int
	Repeats int
}

// repeats returns how many events es stand for.
func repeats(es []BrokerEvent) int {
	n := 0
	for _, e := range es {
		n += e.Repeats
	}
	return n
}

// BrokerLogInfo sums up one broker log a check read.
type BrokerLogInfo struct {
	Name                             string
	Format                           string
	Lines, Events, Skipped, Rejected int
	First, Last                      int64 // its first and last event, NoTime if none
	Accepts, Closes                  int
	ClosedBy                         map[string]int // Closed events by reason
	AcceptsPeak                      int            // the most accepts in one second [AcceptsPeakAt, +1 s)
	AcceptsPeakAt                    int64
	FirstReject                      string // the first rejected line, "LINE: FIELD: REASON"; "" if none
}

// Witness is what the broker's logs say beside the audit
// (FleetStats.Witness): the logs, and the connections the two witnesses
// do not agree on.
type Witness struct {
	Logs []BrokerLogInfo
	// Unaudited are the accepts of a device of the log near which its
	// audit has no connected record; Unseen the connected records near
	// which the broker accepted nothing of the device; Takeovers the
	// connections the broker closed for a new one with the same client id.
	// Each is sorted by device, then time.
	Unaudited []BrokerEvent
	Unseen    []AuditConnect
	Takeovers []BrokerEvent
	// Strangers counts the client ids the broker accepted that the audit
	// never names (other clients of the broker, or devices whose audit is
	// missing), Paired the connected records paired with an accept.
	Strangers, Paired int
	// Known counts the audit's devices the broker accepted at least once;
	// Apart is, over them, the median of the time from a device's first
	// connected record to its nearest accept (its clock minus the
	// broker's): when nothing pairs, how far apart the two logs lie (a
	// broker log in another time zone lies hours off); NoTime if Known is 0.
	Known int
	Apart int64

	logs   []*BrokerLog
	events []brokerEv // every log's, on the broker's clock, in time order
}

// client returns the client id of e.
func (w *Witness) client(e *brokerEv) string { return w.logs[e.Log].clients[e.Client] }

// AcceptsIn returns how many connections the broker's logs say it
// accepted in [from, to).
func (w *Witness) AcceptsIn(from, to int64) int {
	lo, _ := slices.BinarySearchFunc(w.events, from, func(e brokerEv, t int64) int { return cmp.Compare(e.At, t) })
	n := 0
	for i := lo; i < len(w.events) && w.events[i].At < to; i++ {
		if w.events[i].Kind == brokerlog.Accepted {
			n += int(w.events[i].N)
		}
	}
	return n
}

// Apart reports whether the broker's log names the audit's devices but
// none of its accepts pairs with their connected records: the two logs
// lie apart in time (another time zone, another run).
func (w *Witness) apart() bool { return w.Paired == 0 && w.Known > 0 }

// AuditConnect is an audited connected record (on the device's clock).
type AuditConnect struct {
	Device string
	At     int64
	Ref    Ref
}

// judge pairs every device's connected records with the broker's accepts
// of its client id and returns the witness and the clock offsets the
// pairs show (by device ordinal, and as ClockOffsets).
//
// A device's offset is estimated from its connected records c (its first
// offsetSample) and the broker's accepts of its
// client id within MaxClockOffset of them. An accept stamped A to a
// resolution r, and up to l late (a stamp taken as the line was read),
// happened in [A-l, A+r), and the device wrote its record after the
// CONNACK came, so each pair puts the offset in [c-A-r, c-A+l]: the point
// the most of those bounds hold (each widened by OverlapSlack) is a rough
// offset (the middle of the region they share), and each record, moved
// back by it, is paired (match) with an accept whose [A, A+r) it falls
// in, widened by half that region and by half a second for stamps of a
// second, by 50 ms for finer ones. When the pairs' bounds
// [max(c-A-r), min(c-A)] meet, their middle is the offset and half
// their width the resolution (Mosquitto's whole seconds); else (delays
// from CONNACK to record that disagree by more than the stamps resolve,
// or stamps taken late) the offset is the median of c - A - r/2 and the
// resolution half the width of their middle 80%, at least
// FineResolution. The offset is reported, and applied, when it exceeds
// its resolution by more than LatencySlack.
func (w *witnessCounter) judge(logs []*BrokerLog) (*Witness, map[int32][]ClockOffset, []ClockOffset) {
	wit := &Witness{logs: logs}
	for _, l := range logs {
		wit.Logs = append(wit.Logs, l.info)
	}
	// the logs' client ids, as one set
	gid := map[string]int32{}
	remap := make([][]int32, len(logs))
	for li, l := range logs {
		remap[li] = make([]int32, len(l.clients))
		for k, c := range l.clients {
			id, ok := gid[c]
			if !ok {
				id = int32(len(gid))
				gid[c] = id
			}
			remap[li][k] = id
		}
	}
	wit.events = mergedEvents(logs, remap, len(gid))
	byClient := make([][]int32, len(gid))
	for i := range wit.events {
		if e := &wit.events[i]; e.Client != 0 {
			g := remap[e.Log][e.Client]
			byClient[g] = append(byClient[g], int32(i))
		}
	}
	from, to := int64(NoTime), int64(NoTime)
	if n := len(wit.events); n > 0 {
		from, to = wit.events[0].At, wit.events[n-1].At+int64(wit.events[n-1].Res)
	}
	known := make([]bool, len(gid))
	var apart []int64 // each known device's first connect minus its nearest accept
	offsets := map[int32][]ClockOffset{}
	var offs []ClockOffset
	slices.SortFunc(w.Devs, func(a, b witnessDev) int { return strings.Compare(a.ID, b.ID) })
	for _, d := range w.Devs {
		var acc, takeovers []BrokerEvent
		nUnaudited := len(wit.Unaudited)
		if g, ok := gid[d.ID]; ok {
			known[g] = true
			for _, i := range byClient[g] {
				e := &wit.events[i]
				if e.Kind == brokerlog.Accepted {
					acc = appendCopies(acc, wit.event(e), len(d.Conn)+1)
				}
				if e.Kind == brokerlog.Closed && e.Reason == brokerlog.Takeover {
					takeovers = append(takeovers, wit.event(e))
				}
			}
		}
		if len(acc) > 0 && len(d.Conn) > 0 {
			wit.Known++
			c := slices.Min(d.Conn)
			k, _ := slices.BinarySearchFunc(acc, c, func(e BrokerEvent, t int64) int { return cmp.Compare(e.At, t) })
			best := int64(NoTime)
			for _, j := range []int{k - 1, k} {
				if j >= 0 && j < len(acc) && (best == NoTime || abs64(c-acc[j].At) < abs64(best)) {
					best = c - acc[j].At
				}
			}
			apart = append(apart, best)
		}
		mine, split := brokerOffsets(d, acc)
		if len(mine) > 0 {
			offsets[d.Dev] = mine
			offs = append(offs, mine...)
		}
		off := func(t int64) int64 { return offsetAt(mine, t) }
		w.pair(wit, d, acc, off, split, from, to)
		for _, tk := range takeovers {
			if !endedBefore(d, tk.At+off(tk.At)) {
				wit.Takeovers = append(wit.Takeovers, tk)
			}
		}
		slices.SortFunc(wit.Unaudited[nUnaudited:], func(a, b BrokerEvent) int { return cmp.Compare(a.At, b.At) })
	}
	for g, is := range byClient {
		if !known[g] && slices.ContainsFunc(is, func(i int32) bool { return wit.events[i].Kind == brokerlog.Accepted }) {
			wit.Strangers++
		}
	}
	wit.Apart = NoTime
	if len(apart) > 0 {
		slices.Sort(apart)
		wit.Apart = apart[(len(apart)-1)/2]
	}
	if wit.apart() {
		return wit, nil, nil // its accepts are no clock's evidence
	}
	return wit, offsets, offs
}

// mergedEvents returns the events of every log in time order (those with
// the same stamp in the order of the logs, then of each log's lines),
// each Closed one without a keepalive given its session's across the
// logs (a session accepted in one log and timed out in the next, rotated
// one). remap gives each log's client indices as indices below n. One
// log's events are returned as they are held.
func mergedEvents(logs []*BrokerLog, remap [][]int32, n int) []brokerEv {
	if len(logs) == 1 {
		return logs[0].events
	}
	var all []brokerEv
	for li, l := range logs {
		k := len(all)
		all = append(all, l.events...)
		for i := k; i < len(all); i++ {
			all[i].Log = uint16(li)
		}
	}
	slices.SortStableFunc(all, func(x, y brokerEv) int { return cmp.Compare(x.At, y.At) })
	fillKeepalives(all, func(e *brokerEv) uint32 { return uint32(remap[e.Log][e.Client]) }, n)
	return all
}

// event returns e as a BrokerEvent.
func (w *Witness) event(e *brokerEv) BrokerEvent {
	return BrokerEvent{Event: w.logs[e.Log].event(e), Log: int(e.Log), Repeats: int(e.N)}
}

// appendCopies appends to acc the events e stands for, one each, at most
// most of them: the last one stands for the rest. A device's accepts are
// paired one by one with its connected records, of which there are fewer
// than most.
func appendCopies(acc []BrokerEvent, e BrokerEvent, most int) []BrokerEvent {
	n := e.Repeats
	for k := 1; k < min(n, most); k++ {
		one := e
		one.Repeats = 1
		acc = append(acc, one)
	}
	e.Repeats = n - (min(n, most) - 1)
	return append(acc, e)
}

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

// pair matches d's connected records, moved by its offset, with its
// accepts (match, with PairTolerance), and adds what is left over to wit:
// accepts within the device's records' span, and connected records within
// the broker logs' span [from, to).
func (w *witnessCounter) pair(wit *Witness, d witnessDev, acc []BrokerEvent, off func(int64) int64, each []int64, from, to int64) {
	tol := int64(PairTolerance)
	order := make([]int, len(d.Conn))
	for j := range order {
		order[j] = j
	}
	moved := func(j int) int64 { return d.Conn[j] - each[j] }
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(moved(a), moved(b)) })
	cs := make([]int64, len(order))
	for k, j := range order {
		cs[k] = moved(j)
	}
	match(cs, acc, func(int64) int64 { return 0 }, tol, func(k int, a *BrokerEvent) {
		switch {
		case a == nil:
			if c := cs[k]; c >= from && c < to {
				j := order[k]
				wit.Unseen = append(wit.Unseen, AuditConnect{Device: d.ID, At: d.Conn[j], Ref: d.Refs[j]})
			}
		case k < 0:
			if a.At >= d.First-off(d.First)-tol && a.At <= d.Last-off(d.Last)+tol {
				wit.Unaudited = append(wit.Unaudited, *a)
			}
		default:
			wit.Paired++
		}
	})
}

// match pairs the sorted records cs, moved back by off, with the accepts
// (in time order): an accept stamped A to a resolution r answers a record
// c when A - tol <= c - off <= A + r + tol. The records are taken in time
// order, each paired with the fitting accept whose window ends first (a
// maximum matching of points to windows, and a monotone one). fn hears
// each pair (k, a), each record left over (k, nil) and each accept left
// over (-1, a).
func match(cs []int64, acc []BrokerEvent, off func(int64) int64, tol int64, fn func(k int, a *BrokerEvent)) {
	end := func(i int) int64 { return acc[i].At + int64(acc[i].Res) + tol }
	var open []int // accepts whose window has begun, unpaired
	next := 0
	for k, c := range cs {
		c -= off(c)
		for next < len(acc) && acc[next].At-tol <= c {
			open = append(open, next)
			next++
		}
		open = slices.DeleteFunc(open, func(i int) bool {
			if end(i) < c {
				fn(-1, &acc[i])
				return true
			}
			return false
		})
		if len(open) == 0 {
			fn(k, nil)
			continue
		}
		m := 0
		for n := range open {
			if end(open[n]) < end(open[m]) {
				m = n
			}
		}
		fn(k, &acc[open[m]])
		open = slices.Delete(open, m, m+1)
	}
	for _, i := range open {
		fn(-1, &acc[i])
	}
	for ; next < len(acc); next++ {
		fn(-1, &acc[next])
	}
}

// offsetSample is how many of a device's connected records (its first)
// its offset is estimated from.
const offsetSample = 256

// endedBefore reports whether d recorded its session ended between its
// last connected record before t (its own clock) and t: a takeover then
// closed a session the device had already given up (a half-open one the
// broker had not yet timed out), not a live one.
func endedBefore(d witnessDev, t int64) bool {
	up := int64(NoTime)
	for _, c := range d.Conn {
		if c <= t {
			up = max(up, c)
		}
	}
	for _, e := range d.Ended {
		if e > up && e <= t+int64(PairTolerance) {
			return true
		}
	}
	return false
}

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

// logInfo sums up one broker log.
func logInfo(l *BrokerLog) BrokerLogInfo {
	in := BrokerLogInfo{Name: l.Name, Format: l.Format.String(), Lines: l.Lines, Events: l.Found, Skipped: l.Skipped,
		Rejected: l.Rejected, First: NoTime, Last: NoTime, AcceptsPeakAt: NoTime, ClosedBy: map[string]int{}}
	if len(l.Rejects) > 0 {
		in.FirstReject = l.Rejects[0].String()
	}
	if n := len(l.events); n > 0 {
		in.First, in.Last = l.events[0].At, l.events[n-1].At
	}
	for i := range l.events {
		switch e := &l.events[i]; e.Kind {
		case brokerlog.Accepted:
			in.Accepts += int(e.N)
		case brokerlog.Closed:
			in.Closes += int(e.N)
			in.ClosedBy[e.Reason.String()] += int(e.N)
		}
	}
	in.AcceptsPeak, in.AcceptsPeakAt = acceptsPeak(l.events, int64(time.Second), func(*brokerEv) bool { return true })
	return in
}

// The ways the broker's log dates an incident (IncidentBroker.Basis).
const (
	// BasisBrokerDown: the broker said it was going down (or the corpus
	// recorder marked that it killed it).
	BasisBrokerDown = "broker down"
	// BasisTimeouts: a silent outage, dated from the keepalive timeouts
	// the broker logged for the incident's devices. A broker closes a
	// session 1.5 keepalives K after the client's last packet (Mosquitto
	// 2.0 up to a quarter keepalive later: 2.7 s at K = 20 s in the
	// corpus), and that packet came in the keepalive before the link died,
	// so the link died in [last timeout - 1.75K - r, first timeout - 0.5K]
	// for stamps of resolution r; LostAt is the middle.
	BasisTimeouts = "keepalive timeouts"
)

// IncidentBroker is what the broker's logs say of an incident
// (Incident.Broker): its times as the broker saw them, beside the audit's.
type IncidentBroker struct {
	// LostAt is when the broker saw the incident begin, bounded by
	// LostAtEarliest and LostAtLatest, by Basis; NoTime and "" when its
	// log does not show it (a SIGKILL leaves no line).
	LostAt, LostAtEarliest, LostAtLatest int64
	Basis                                string
	// DownAt is the broker's last word before the incident that it was
	// going down, UpAt its first that it was running after it; NoTime if
	// none.
	DownAt, UpAt int64
	// FirstAcceptAt is the broker's first accept of one of the incident's
	// devices after its loss (and after UpAt); NoTime if none.
	FirstAcceptAt int64
	// Timeouts counts the keepalive timeouts of its devices, first to last.
	Timeouts                  int
	FirstTimeout, LastTimeout int64
	// ClosedBy counts its devices' sessions the broker closed, by reason,
	// from the loss's earliest bound to the broker's first accept of them.
	ClosedBy map[string]int
	// AcceptsPeak is the most accepts of any client in one second
	// [AcceptsPeakAt, +1 s) from the loss to the next incident.
	AcceptsPeak   int
	AcceptsPeakAt int64
	// AcceptsRes is the coarsest resolution of the accepts' stamps
	// (1 s for Mosquitto's default): its peak counts stamped seconds, so a
	// burst across a second's edge splits between two.
	AcceptsRes time.Duration
	// Refusals counts the CONNACK refusals the broker sent (Refused
	// events, of any client: Mosquitto names some by their address) from
	// the loss's earliest bound to the next incident, by reason code, in
	// code order; nil when its log wrote none (Mosquitto writes them only
	// with log_type debug or all).
	Refusals []CodeCount
	// UpThroughout is true when the broker's log has lines from before
	// the loss to after the first connect and says nothing of the broker
	// going down or up from 5 s before the loss to that connect: the
	// broker was up and the devices' loss was not its restart.
	UpThroughout bool
}

// CodeCount is how many times a reason code was sent.
type CodeCount struct {
	Code int32
	N    int
}

// incident returns what the broker's events say of inc, whose devices
// are members, before the next incident's loss (NoTime: none).
func (wit *Witness) incident(inc *Incident, members map[string]bool, next int64) *IncidentBroker {
	ib := &IncidentBroker{LostAt: NoTime, LostAtEarliest: NoTime, LostAtLatest: NoTime, DownAt: NoTime, UpAt: NoTime,
		FirstAcceptAt: NoTime, FirstTimeout: NoTime, LastTimeout: NoTime, ClosedBy: map[string]int{}, AcceptsPeakAt: NoTime}
	downFrom := inc.FirstLoss - int64(5*time.Second)
	from := min(inc.LostAtEarliest, downFrom)
	end := next
	if end == NoTime {
		end = 1<<63 - 1
	}
	lo, _ := slices.BinarySearchFunc(wit.events, from, func(e brokerEv, t int64) int { return cmp.Compare(e.At, t) })
	hi := lo
	for hi < len(wit.events) && wit.events[hi].At < end {
		hi++
	}
	evs := wit.events[lo:hi]
	var timeouts []brokerEv
	restarted := false
	refusals := map[int32]int{}
	for i := range evs {
		e := &evs[i]
		if (e.Kind == brokerlog.BrokerDown || e.Kind == brokerlog.BrokerUp) && (inc.FirstConnectAt == NoTime || e.At <= inc.FirstConnectAt) {
			restarted = true
		}
		if e.Kind == brokerlog.Refused && e.At >= inc.LostAtEarliest {
			refusals[int32(e.Code)] += int(e.N)
		}
		switch {
		case e.Kind == brokerlog.BrokerDown && e.At >= downFrom && e.At <= inc.FirstLoss+int64(time.Second) && ib.UpAt == NoTime:
			ib.DownAt = e.At
		case e.Kind == brokerlog.BrokerUp && e.At > inc.FirstLoss-int64(time.Second) && ib.UpAt == NoTime && ib.FirstAcceptAt == NoTime:
			ib.UpAt = e.At
		case e.Kind == brokerlog.Accepted && e.At >= inc.LostAtEarliest:
			ib.AcceptsRes = max(ib.AcceptsRes, time.Duration(e.Res))
			if ib.FirstAcceptAt == NoTime && (ib.UpAt == NoTime || e.At >= ib.UpAt) && members[wit.client(e)] {
				ib.FirstAcceptAt = e.At
			}
		case e.Kind == brokerlog.Closed && ib.FirstAcceptAt == NoTime && e.At >= inc.LostAtEarliest && members[wit.client(e)]:
			ib.ClosedBy[e.Reason.String()] += int(e.N)
			if e.Reason == brokerlog.KeepaliveTimeout && e.Keepalive > 0 {
				timeouts = append(timeouts, *e)
			}
		}
	}
	ib.AcceptsPeak, ib.AcceptsPeakAt = acceptsPeak(evs, int64(time.Second), func(e *brokerEv) bool { return e.At >= inc.LostAtEarliest })
	for code, n := range refusals {
		ib.Refusals = append(ib.Refusals, CodeCount{Code: code, N: n})
	}
	slices.SortFunc(ib.Refusals, func(a, b CodeCount) int { return cmp.Compare(a.Code, b.Code) })
	ib.UpThroughout = !restarted && len(wit.events) > 0 && wit.events[0].At < inc.LostAtEarliest &&
		inc.FirstConnectAt != NoTime && wit.events[len(wit.events)-1].At >= inc.FirstConnectAt
	switch {
	case ib.DownAt != NoTime:
		ib.LostAt, ib.LostAtEarliest, ib.LostAtLatest, ib.Basis = ib.DownAt, ib.DownAt, ib.DownAt, BasisBrokerDown
	case len(timeouts) > 0:
		ib.datedByTimeouts(timeouts)
	}
	return ib
}

// datedByTimeouts dates a silent outage from its keepalive timeouts (see
// BasisTimeouts).
func (ib *IncidentBroker) datedByTimeouts(ts []brokerEv) {
	lo, hi := int64(NoTime), int64(1<<63-1)
	for _, t := range ts {
		k := int64(t.Keepalive) * int64(time.Second)
		lo, hi = max(lo, t.At-k*7/4-int64(t.Res)), min(hi, t.At-k/2)
		ib.Timeouts += int(t.N)
	}
	ib.FirstTimeout, ib.LastTimeout = ts[0].At, ts[len(ts)-1].At
	if lo > hi {
		return // timeouts further apart than one link's death allows: no date
	}
	ib.LostAtEarliest, ib.LostAtLatest, ib.Basis = lo, hi, BasisTimeouts
	ib.LostAt = midpoint(lo, hi)
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// storedBrokerLogs reads the broker logs stored with the dataset in dir
// (ingest --broker-log), as they were read when stored. A file that no
// longer matches the digest the manifest holds was changed after ingest:
// it is not read as a witness, and what is said of it is returned.
func storedBrokerLogs(dir string, man *dataset.Manifest) ([]*BrokerLog, []string, error) {
	var out []*BrokerLog
	var changed []string
	for _, b := range man.BrokerLogs {
		if !filepath.IsLocal(filepath.FromSlash(b.File)) || !strings.HasPrefix(b.File, dataset.BrokerDir+"/") {
			return nil, nil, fmt.Errorf("%s: broker_logs: file %q: expected a file under %s/", dataset.ManifestName, b.File, dataset.BrokerDir)
		}
		format, err := brokerlog.ParseFormat(b.Format)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: broker_logs: %s: format: %v", dataset.ManifestName, b.File, err)
		}
		loc, err := time.LoadLocation(b.TZ)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: broker_logs: %s: tz: %v", dataset.ManifestName, b.File, err)
		}
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(b.File)))
		if err != nil {
			return nil, nil, err
		}
		h := sha256.New()
		cnt := &countWriter{}
		r := io.TeeReader(f, io.MultiWriter(h, cnt))
		l, err := LoadBrokerLog(r, b.Name, brokerlog.Options{Format: format, TZ: loc})
		if err == nil {
			_, err = io.Copy(io.Discard, r) // the digest is of every byte
		}
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != b.Digest.SHA256 || cnt.n != b.Digest.Bytes {
			changed = append(changed, fmt.Sprintf("%s, stored as %s, was changed after ingest (%d bytes with SHA-256 %s; the manifest holds %d bytes with %s): "+
				"not read as a witness (verify names it)", b.Name, b.File, cnt.n, got, b.Digest.Bytes, b.Digest.SHA256))
			continue
		}
		out = append(out, l)
	}
	return out, changed, nil
}
