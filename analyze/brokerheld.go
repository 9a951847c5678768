package analyze

import (
	"cmp"
	"io"
	"math"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/brokerlog"
)

// BrokerLog is a broker's log as a check holds it (Options.Broker): its
// accounting as read, and its events in a compact form of 40 bytes
// each. A client id is held once, however many events name it; the
// broker's own words are kept only for a takeover's close (the findings
// quote them); and a run of events that differ in nothing but their line
// (the same stamp, client, kind, reason, keepalive, code) is held once
// with its count. So what a log costs grows with the clients it names and
// the events that differ, never with lines that repeat: 20 million
// identical accept lines are one event.
type BrokerLog struct {
	// Log is the accounting of the read and its first rejects; its
	// Events are not kept.
	*brokerlog.Log
	info    BrokerLogInfo
	events  []brokerEv        // sorted by At, the log's order within a stamp
	clients []string          // by index; clients[0] is ""
	details map[uint32]string // a takeover close's words, by its line
}

// brokerEv is a broker log's event, compactly (see BrokerLog).
type brokerEv struct {
	At        int64
	N         uint32 // the identical events it stands for, at least 1
	Line      uint32 // the first one's line
	Client    uint32 // an index into its log's clients
	Res, Late int32  // nanoseconds (brokerlog.Event's, at most 1 s)
	Keepalive uint16
	Log       uint16 // which of a check's logs (Witness.Logs)
	Kind      brokerlog.Kind
	Reason    brokerlog.Reason
	Code      uint8
	Clean     int8
}

// LoadBrokerLog reads a broker log from r (see brokerlog.Scan, whose
// bounds it keeps) into the compact form a check holds.
func LoadBrokerLog(r io.Reader, name string, opt brokerlog.Options) (*BrokerLog, error) {
	h := newBrokerHolder()
	l, err := brokerlog.Scan(r, name, opt, h.add)
	if err != nil {
		return nil, err
	}
	return h.done(l), nil
}

// BrokerLogOf holds a log Read has already read (its Events) in the
// compact form.
func BrokerLogOf(l *brokerlog.Log) *BrokerLog {
	h := newBrokerHolder()
	for i := range l.Events {
		h.add(&l.Events[i])
	}
	head := *l
	head.Events = nil
	return h.done(&head)
}

// brokerHolder gathers a log's events as they are read.
type brokerHolder struct {
	b      *BrokerLog
	byID   map[string]uint32
	detail string // the last event's words, for a takeover
}

func newBrokerHolder() *brokerHolder {
	return &brokerHolder{b: &BrokerLog{clients: []string{""}, details: map[uint32]string{}}, byID: map[string]uint32{"": 0}}
}

func (h *brokerHolder) add(e *brokerlog.Event) {
	id, ok := h.byID[e.Client]
	if !ok {
		id = uint32(len(h.b.clients))
		h.b.clients = append(h.b.clients, e.Client)
		h.byID[e.Client] = id
	}
	ev := brokerEv{At: e.At, N: 1, Line: uint32(e.Line), Client: id, Res: clampNs(e.Res), Late: clampNs(e.Late),
		Keepalive: uint16(min(max(e.Keepalive, 0), math.MaxUint16)), Kind: e.Kind, Reason: e.Reason, Code: e.Code, Clean: e.Clean}
	takeover := e.Kind == brokerlog.Closed && e.Reason == brokerlog.Takeover
	if n := len(h.b.events); n > 0 && sameEvent(h.b.events[n-1], ev) && (!takeover || e.Detail == h.detail) {
		if last := &h.b.events[n-1]; last.N < math.MaxUint32 {
			last.N++
			return
		}
	}
	if takeover {
		h.b.details[ev.Line], h.detail = e.Detail, e.Detail
	}
	h.b.events = append(h.b.events, ev)
}

// sameEvent reports whether a and b differ in nothing but their line and
// count.
func sameEvent(a, b brokerEv) bool {
	a.Line, a.N, b.Line, b.N = 0, 0, 0, 0
	return a == b
}

func clampNs(d time.Duration) int32 { return int32(min(max(d, 0), math.MaxInt32)) }

// done sorts the events, gives each Closed event without a keepalive its
// session's (the one its client declared at its last accept before it),
// and sums the log up.
func (h *brokerHolder) done(l *brokerlog.Log) *BrokerLog {
	b := h.b
	b.Log = l
	slices.SortStableFunc(b.events, func(x, y brokerEv) int { return cmp.Compare(x.At, y.At) })
	fillKeepalives(b.events, func(e *brokerEv) uint32 { return e.Client }, len(b.clients))
	b.info = logInfo(b)
	return b
}

// fillKeepalives gives each Closed event of evs (in time order) without a
// keepalive the one its client (client(e), below n) declared at its last
// accept before it.
func fillKeepalives(evs []brokerEv, client func(*brokerEv) uint32, n int) {
	keepalive := make([]uint16, n)
	for i := range evs {
		e := &evs[i]
		switch {
		case e.Kind == brokerlog.Accepted && e.Keepalive > 0:
			keepalive[client(e)] = e.Keepalive
		case e.Kind == brokerlog.Closed && e.Keepalive == 0:
			e.Keepalive = keepalive[client(e)]
		}
	}
}

// event returns e as a brokerlog.Event of log b, with n its count.
func (b *BrokerLog) event(e *brokerEv) brokerlog.Event {
	return brokerlog.Event{At: e.At, Res: time.Duration(e.Res), Late: time.Duration(e.Late), Kind: e.Kind,
		Client: b.clients[e.Client], Reason: e.Reason, Detail: b.details[e.Line], Keepalive: int(e.Keepalive),
		Clean: e.Clean, Code: e.Code, Line: int(e.Line)}
}

// acceptsPeak returns the most accepts (counted with their repeats) that
// keep holds to lie in one window of width w of evs (in time order), and
// when the first such window begins (NoTime if none).
func acceptsPeak(evs []brokerEv, w int64, keep func(*brokerEv) bool) (int, int64) {
	best, at := 0, int64(NoTime)
	in, j := 0, 0
	counted := func(e *brokerEv) bool { return e.Kind == brokerlog.Accepted && keep(e) }
	for i := range evs {
		if !counted(&evs[i]) {
			continue
		}
		for ; j < len(evs) && evs[j].At < addSat(evs[i].At, w); j++ {
			if counted(&evs[j]) {
				in += int(evs[j].N)
			}
		}
		if in > best {
			best, at = in, evs[i].At
		}
		in -= int(evs[i].N)
	}
	return best, at
}
