package analyze

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/brokerlog"
	"github.com/stormaudit/stormaudit/dataset"
)

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

// storedBrokerLogs reads the broker logs stored with the dataset in dir
// (ingest --broker-log), as they were read when stored
// (dataset.OpenBrokerLog). A file that no longer matches the digest the
// manifest holds was changed after ingest: it is not read as a witness,
// and what is said of it is returned.
func storedBrokerLogs(dir string, man *dataset.Manifest) ([]*BrokerLog, []string, error) {
	var out []*BrokerLog
	var changed []string
	for _, b := range man.BrokerLogs {
		f, err := dataset.OpenBrokerLog(dir, b)
		if err != nil {
			return nil, nil, err
		}
		l, err := LoadBrokerLog(f, b.Name, f.Options)
		var ch string
		if err == nil {
			ch, err = f.Changed() // the digest is of every byte
		}
		f.Close()
		switch {
		case err != nil:
			return nil, nil, err
		case ch != "":
			changed = append(changed, ch+": not read as a witness (verify names it)")
		default:
			out = append(out, l)
		}
	}
	return out, changed, nil
}
