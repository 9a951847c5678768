package analyze

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	Dev         int32 // the device's ordinal, as incidentCounter's
	ID          string
	Conn        []int64
	Refs        []Ref
	First, Last int64
}

func (w *witnessCounter) add(d *Device, dev int32) {
	if !w.On || len(d.Events) == 0 {
		return
	}
	wd := witnessDev{Dev: dev, ID: strings.Clone(d.ID), First: d.Events[0].At, Last: d.Events[0].At}
	for i := range d.Events {
		e := &d.Events[i]
		wd.First, wd.Last = min(wd.First, e.At), max(wd.Last, e.At)
		if e.Outcome == auditfmt.Connected && isSessionStage(e.Stage) {
			wd.Conn, wd.Refs = append(wd.Conn, e.At), append(wd.Refs, e.Ref)
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
// (an index into Witness.Logs).
type BrokerEvent struct {
	brokerlog.Event
	Log int
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
	// Events are every broker log's events, on the broker's clock, in
	// time order.
	Events []BrokerEvent
}

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
// A device's offset is estimated from the differences c - A between its
// connected records c and the broker's accepts A within MaxClockOffset:
// the most of them within one second of each other pick the pairs. An
// accept stamped A to a resolution r, and up to l late, happened in
// [A-l, A+r), and the device wrote its record after the CONNACK came, so
// each pair puts the offset in [c-A-r, c-A+l]. When the pairs' bounds
// without lateness meet, [max(c-A-r), min(c-A)], their middle is the
// offset and half its width the resolution (Mosquitto's whole seconds);
// when only lateness makes them meet (a recorder that read some lines
// late), the offset is max(c-A-r), the least late pair's, and the
// resolution half the width of [max(c-A-r), min(c-A+l)]; when nothing
// makes them meet (delays from CONNACK to record that disagree by more
// than fine stamps resolve), the offset is the median of c - A - r/2 and
// the resolution half the width of their middle 80%, at least
// FineResolution. The offset is reported, and applied, when it exceeds
// its resolution and 100 ms.
func (w *witnessCounter) judge(logs []*brokerlog.Log) (*Witness, map[int32]int64, []ClockOffset) {
	wit := &Witness{}
	byClient := map[string][]int{}
	for li, l := range logs {
		wit.Logs = append(wit.Logs, logInfo(l))
		for _, e := range l.Events {
			wit.Events = append(wit.Events, BrokerEvent{Event: e, Log: li})
		}
	}
	slices.SortStableFunc(wit.Events, func(a, b BrokerEvent) int { return cmp.Compare(a.At, b.At) })
	for i := range wit.Events {
		if c := wit.Events[i].Client; c != "" {
			byClient[c] = append(byClient[c], i)
		}
	}
	from, to := int64(NoTime), int64(NoTime)
	if n := len(wit.Events); n > 0 {
		from, to = wit.Events[0].At, wit.Events[n-1].At+int64(wit.Events[n-1].Res)
	}
	known := map[string]bool{}
	offsets := map[int32]int64{}
	var offs []ClockOffset
	slices.SortFunc(w.Devs, func(a, b witnessDev) int { return strings.Compare(a.ID, b.ID) })
	for _, d := range w.Devs {
		known[d.ID] = true
		var acc []BrokerEvent
		nUnaudited := len(wit.Unaudited)
		for _, i := range byClient[d.ID] {
			if wit.Events[i].Kind == brokerlog.Accepted {
				acc = append(acc, wit.Events[i])
			}
			if wit.Events[i].Kind == brokerlog.Closed && wit.Events[i].Reason == brokerlog.Takeover {
				wit.Takeovers = append(wit.Takeovers, wit.Events[i])
			}
		}
		off, res, ok := estimateOffset(d.Conn, acc)
		if ok && abs64(off) > max(res, int64(100*time.Millisecond)) {
			offsets[d.Dev] = off
			offs = append(offs, ClockOffset{Device: d.ID, Offset: time.Duration(off), Resolution: time.Duration(res), LostAt: NoTime, Basis: BasisBroker, dev: d.Dev})
		}
		if !ok {
			off = 0
		}
		w.pair(wit, d, acc, off, from, to)
		slices.SortFunc(wit.Unaudited[nUnaudited:], func(a, b BrokerEvent) int { return cmp.Compare(a.At, b.At) })
	}
	for c := range byClient {
		if !known[c] {
			wit.Strangers++
		}
	}
	return wit, offsets, offs
}

// pair matches d's connected records, moved by its offset, with its
// accepts, and adds what is left over to wit: accepts within the device's
// records' span, and connected records within the broker logs' span
// [from, to). An accept stamped A to a resolution r answers a connected
// record c (corrected) when A - PairTolerance <= c <= A + r +
// PairTolerance; the records are taken in time order, each paired with
// the accept it fits whose window ends first (a maximum matching of
// points to windows).
func (w *witnessCounter) pair(wit *Witness, d witnessDev, acc []BrokerEvent, off, from, to int64) {
	tol := int64(PairTolerance)
	conn := make([]int, len(d.Conn))
	for j := range conn {
		conn[j] = j
	}
	slices.SortFunc(conn, func(a, b int) int { return cmp.Compare(d.Conn[a], d.Conn[b]) })
	end := func(a BrokerEvent) int64 { return a.At + int64(a.Res) + tol }
	var open []int // accepts whose window has begun, unpaired
	next := 0
	drop := func(i int) {
		if a := acc[i].At; a >= d.First-off-tol && a <= d.Last-off+tol {
			wit.Unaudited = append(wit.Unaudited, acc[i])
		}
	}
	for _, j := range conn {
		c := d.Conn[j] - off
		for next < len(acc) && acc[next].At-tol <= c {
			open = append(open, next)
			next++
		}
		open = slices.DeleteFunc(open, func(i int) bool {
			if end(acc[i]) < c {
				drop(i)
				return true
			}
			return false
		})
		if len(open) == 0 {
			if c >= from && c < to {
				wit.Unseen = append(wit.Unseen, AuditConnect{Device: d.ID, At: d.Conn[j], Ref: d.Refs[j]})
			}
			continue
		}
		k := 0
		for m := range open {
			if end(acc[open[m]]) < end(acc[open[k]]) {
				k = m
			}
		}
		open = slices.Delete(open, k, k+1)
		wit.Paired++
	}
	for _, i := range open {
		drop(i)
	}
	for ; next < len(acc); next++ {
		drop(next)
	}
}

// estimateOffset estimates a device's clock offset from its connected
// records and the broker's accepts (see judge); ok is false when no
// difference lies within MaxClockOffset.
func estimateOffset(conn []int64, acc []BrokerEvent) (off, res int64, ok bool) {
	var diffs []int64
	for _, c := range conn {
		for _, a := range acc {
			if d := c - a.At; abs64(d) <= int64(MaxClockOffset) {
				diffs = append(diffs, d)
			}
		}
	}
	if len(diffs) == 0 {
		return 0, 0, false
	}
	slices.Sort(diffs)
	// the most differences within one second of each other
	best, at := 0, 0
	for lo, hi := 0, 0; lo < len(diffs); lo++ {
		for hi < len(diffs) && diffs[hi]-diffs[lo] <= int64(time.Second) {
			hi++
		}
		if hi-lo > best {
			best, at = hi-lo, lo
		}
	}
	mode := diffs[at : at+best]
	lo, hi, least := int64(NoTime), int64(1<<63-1), int64(1<<63-1)
	var mid []time.Duration
	for _, c := range conn {
		for _, a := range acc {
			if d := c - a.At; d >= mode[0] && d <= mode[len(mode)-1] {
				lo, hi, least = max(lo, d-int64(a.Res)), min(hi, d+int64(a.Late)), min(least, d)
				mid = append(mid, time.Duration(d-int64(a.Res)/2))
			}
		}
	}
	switch {
	case lo <= least: // the stamps bound it: the middle
		return lo + (least-lo)/2, (least - lo) / 2, true
	case lo <= hi: // only stamps taken late explain the pairs: the least late
		return lo, (hi - lo) / 2, true
	}
	slices.Sort(mid)
	spread := max(int64(rank(mid, 0.9)-rank(mid, 0.1))/2, int64(FineResolution))
	return int64(rank(mid, 0.5)), spread, true
}

// logInfo sums up one broker log.
func logInfo(l *brokerlog.Log) BrokerLogInfo {
	in := BrokerLogInfo{Name: l.Name, Format: l.Format.String(), Lines: l.Lines, Events: len(l.Events), Skipped: l.Skipped,
		Rejected: l.Rejected, First: NoTime, Last: NoTime, AcceptsPeakAt: NoTime, ClosedBy: map[string]int{}}
	var acc []int64
	for _, e := range l.Events {
		if in.First == NoTime {
			in.First = e.At
		}
		in.Last = e.At
		switch e.Kind {
		case brokerlog.Accepted:
			in.Accepts++
			acc = append(acc, e.At)
		case brokerlog.Closed:
			in.Closes++
			in.ClosedBy[e.Reason.String()]++
		}
	}
	in.AcceptsPeak, in.AcceptsPeakAt = peakPerWindow(acc, -1<<63+1, NoTime, int64(time.Second))
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
}

// incident returns what the broker's events say of inc, whose devices
// are members, before the next incident's loss (NoTime: none).
func (wit *Witness) incident(inc *Incident, members map[string]bool, next int64) *IncidentBroker {
	ib := &IncidentBroker{LostAt: NoTime, LostAtEarliest: NoTime, LostAtLatest: NoTime, DownAt: NoTime, UpAt: NoTime,
		FirstAcceptAt: NoTime, FirstTimeout: NoTime, LastTimeout: NoTime, ClosedBy: map[string]int{}, AcceptsPeakAt: NoTime}
	from := min(inc.LostAtEarliest, inc.FirstLoss) - int64(5*time.Second)
	end := next
	if end == NoTime {
		end = 1<<63 - 1
	}
	keepalive := map[string]int{}
	var accepts []int64
	var timeouts []BrokerEvent
	for _, e := range wit.Events {
		if e.Kind == brokerlog.Accepted && e.Keepalive > 0 {
			keepalive[e.Client] = e.Keepalive
		}
		if e.At < from || e.At >= end {
			continue
		}
		switch {
		case e.Kind == brokerlog.BrokerDown && e.At <= inc.FirstLoss+int64(time.Second) && ib.UpAt == NoTime:
			ib.DownAt = e.At
		case e.Kind == brokerlog.BrokerUp && e.At > inc.FirstLoss-int64(time.Second) && ib.UpAt == NoTime && ib.FirstAcceptAt == NoTime:
			ib.UpAt = e.At
		case e.Kind == brokerlog.Accepted && e.At >= inc.LostAtEarliest:
			accepts = append(accepts, e.At)
			if members[e.Client] && ib.FirstAcceptAt == NoTime && e.At >= inc.FirstLoss-int64(e.Res) {
				ib.FirstAcceptAt = e.At
			}
		case e.Kind == brokerlog.Closed && members[e.Client] && ib.FirstAcceptAt == NoTime && e.At >= inc.LostAtEarliest:
			ib.ClosedBy[e.Reason.String()]++
			if e.Reason == brokerlog.KeepaliveTimeout && keepalive[e.Client] > 0 {
				e.Keepalive = keepalive[e.Client]
				timeouts = append(timeouts, e)
			}
		}
	}
	ib.AcceptsPeak, ib.AcceptsPeakAt = peakPerWindow(accepts, -1<<63+1, NoTime, int64(time.Second))
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
func (ib *IncidentBroker) datedByTimeouts(ts []BrokerEvent) {
	lo, hi := int64(NoTime), int64(1<<63-1)
	for _, t := range ts {
		k := int64(t.Keepalive) * int64(time.Second)
		lo, hi = max(lo, t.At-k*7/4-int64(t.Res)), min(hi, t.At-k/2)
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	ib.Timeouts, ib.FirstTimeout, ib.LastTimeout = len(ts), ts[0].At, ts[len(ts)-1].At
	ib.LostAtEarliest, ib.LostAtLatest, ib.Basis = lo, hi, BasisTimeouts
	ib.LostAt = lo + (hi-lo)/2
}

// storedBrokerLogs reads the broker logs stored with the dataset in dir
// (ingest --broker-log), as they were read when stored.
func storedBrokerLogs(dir string, man *dataset.Manifest) ([]*brokerlog.Log, error) {
	var out []*brokerlog.Log
	for _, b := range man.BrokerLogs {
		if !filepath.IsLocal(filepath.FromSlash(b.File)) || !strings.HasPrefix(b.File, dataset.BrokerDir+"/") {
			return nil, fmt.Errorf("%s: broker_logs: file %q: expected a file under %s/", dataset.ManifestName, b.File, dataset.BrokerDir)
		}
		format, err := brokerlog.ParseFormat(b.Format)
		if err != nil {
			return nil, fmt.Errorf("%s: broker_logs: %s: format: %v", dataset.ManifestName, b.File, err)
		}
		loc, err := time.LoadLocation(b.TZ)
		if err != nil {
			return nil, fmt.Errorf("%s: broker_logs: %s: tz: %v", dataset.ManifestName, b.File, err)
		}
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(b.File)))
		if err != nil {
			return nil, err
		}
		l, err := brokerlog.Read(f, b.Name, brokerlog.Options{Format: format, TZ: loc})
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}
