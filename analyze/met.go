package analyze

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// What an incident's devices met while they were down, and who never came
// back (docs/rules.md, "What the devices met" and "Who never came back").

// Met counts the records of one kind that an incident's devices wrote
// from their loss to the connect that ended it (that record included), or
// to the end of the log: what they met while they were down, by stage and,
// within a stage, by outcome, failure class and reason code.
// rate_limited_wait records are not counted (a wait is no attempt), nor
// an attempt's second failure record (see tally).
type Met struct {
	Stage   auditfmt.Stage        // link, address or session (a record without one is of the session)
	Outcome auditfmt.Outcome      // backoff_wait (an attempt begun), connected, attempt_failed, refused, ...
	Class   auditfmt.FailureClass // failure_class; 0 when absent
	Reason  int32                 // reason_code; -1 when absent
	Records int                   // records of this kind
	Devices int                   // the devices that wrote one
}

// metCount is one kind's count in one loss's tally: a Met's key, packed
// (see metKey), and its records, for one device.
type metCount struct {
	Key uint64
	N   int32
}

// metKey packs a record's stage, outcome, class and reason into one word:
// the stage and outcome in the top 16 bits (what StageOutcome groups by),
// then the class, then the reason code.
func metKey(stage auditfmt.Stage, e *Event) uint64 {
	return uint64(stage)<<56 | uint64(e.Outcome)<<48 | uint64(e.Fail)<<40 | uint64(uint32(e.Reason))
}

// unpack returns the Met of key k, with no counts.
func unpackMet(k uint64) Met {
	return Met{Stage: auditfmt.Stage(k >> 56), Outcome: auditfmt.Outcome(k >> 48), Class: auditfmt.FailureClass(k >> 40),
		Reason: int32(uint32(k))}
}

// tally adds the records events[from:to+1] to the tally of the loss l,
// whose counts are the last of ic.Met. An attempt's second failure record
// (an attempt_failed after the refused of the same attempt, as a manager
// that hears of the refusal in a callback and of the failure in its own
// loop writes both) is not counted again: its first says what it met.
func (ic *incidentCounter) tally(events []Event, from, to int, l *lossEvent) {
	var failed [auditfmt.StageService + 1]bool // the stage's current attempt has a failure record
	var byOutcome [16]int32                    // the count a record of each outcome went to last, +1
	for i := max(from, 0); i <= to && i < len(events); i++ {
		e := &events[i]
		stage := e.Stage
		if isSessionStage(stage) {
			stage = auditfmt.StageSession
		}
		switch e.Outcome {
		case auditfmt.RateLimitedWait:
			continue
		case auditfmt.BackoffWait:
			failed[stage] = false
		case auditfmt.AttemptFailed, auditfmt.Refused:
			if failed[stage] {
				continue
			}
			failed[stage] = true
		}
		key := metKey(stage, e)
		counts := ic.Met[l.MetAt:]
		slot := &byOutcome[e.Outcome&15]
		if k := *slot - 1; k >= 0 && counts[k].Key == key {
			counts[k].N++
			continue
		}
		k := slices.IndexFunc(counts, func(m metCount) bool { return m.Key == key })
		if k >= 0 {
			counts[k].N++
			*slot = int32(k) + 1
			continue
		}
		if l.MetN == math.MaxUint16 {
			continue // more kinds than any device writes: the rest uncounted
		}
		ic.Met = append(ic.Met, metCount{Key: key, N: 1})
		*slot = int32(l.MetN) + 1
		l.MetN++
	}
}

// metOf adds to d the tallies of the losses ls whose device is mine,
// each device counted once per kind, and once per stage and outcome.
func (ic *incidentCounter) metOf(d *incidentDetail, ls []lossEvent, mine func(int32) bool) {
	// each kind counts a device once in a bit set of its own: kinds are
	// few (tens), the losses many
	type tally struct {
		sum  *metSum
		seen devSet
	}
	const so = uint64(0xffff) << 48 // the key's stage and outcome
	byKey, bySO := map[uint64]*tally{}, map[uint64]*tally{}
	count := func(m map[uint64]*tally, into map[uint64]*metSum, key uint64, dev, n int32) {
		t := m[key]
		if t == nil {
			t = &tally{sum: &metSum{}, seen: newDevSet(ls)}
			m[key], into[key] = t, t.sum
		}
		t.sum.Records += int(n)
		if t.seen.add(dev) {
			t.sum.Devices++
		}
	}
	var costs [costKinds]*costSeen
	for i := range ls {
		l := &ls[i]
		if !mine(l.Dev) {
			continue
		}
		for _, m := range ic.Met[l.MetAt : l.MetAt+int32(l.MetN)] {
			if k, ok := costOf(m.Key); ok {
				d.addCost(&costs, ls, k, l.Dev, m.N)
				continue
			}
			count(byKey, d.Met, m.Key, l.Dev, m.N)
			count(bySO, d.Stages, m.Key&so, l.Dev, m.N)
		}
	}
}

// StageOutcome counts the records of one outcome of one stage that an
// incident's devices wrote while down (the Met of that stage and outcome
// over every class and reason), and the devices that wrote one.
type StageOutcome struct {
	Stage   auditfmt.Stage
	Outcome auditfmt.Outcome
	Records int
	Devices int
}

// The last states of a device that had not recovered (Unrecovered.State).
const (
	StateWaiting  = "waiting"   // waiting out a backoff whose socket-open is due after the log's end
	StateInFlight = "in-flight" // its socket-open came within InFlightLimit of the log's end, with no outcome recorded
	StateRefused  = "refused"   // its last record is a refusal
	StateFailed   = "failed"    // its last record is a failed attempt, and it wrote nothing after it
	StateGaveUp   = "gave-up"   // it gave up
	StateStopped  = "stopped"   // it stopped on purpose
	StateSilent   = "silent"    // it wrote nothing more: no attempt after its loss, or a due socket-open never recorded an outcome
)

// InFlightLimit is how long before the log's end an attempt with no
// recorded outcome may have opened its socket to count as in flight when
// the log ended, the time a connect may take to fail (TCP's SYN retries,
// a CONNACK timeout): an attempt opened earlier should have ended, and
// the device is silent.
const InFlightLimit = 30 * time.Second

// Unrecovered is a device of an incident that had not connected again by
// the end of the log, with its last state.
type Unrecovered struct {
	Device string
	// State is one of StateWaiting ... StateSilent.
	State string
	// At is when it wrote its last record, Stage that record's stage.
	At    int64
	Stage auditfmt.Stage
	// Due is the socket-open its last backoff was to end in (waiting,
	// in-flight, or a silent device whose due open came and went), and
	// Delay the backoff drawn and waits imposed, s; NoTime and 0 when its
	// last record began no attempt.
	Due   int64
	Delay float64
	// Class and Reason are the failure_class and reason_code of its last
	// record (0 and -1 when absent).
	Class  auditfmt.FailureClass
	Reason int32
	// Attempts counts the attempts it began since its loss.
	Attempts int
	// CutShort is true when the log ended too soon to tell how it would
	// end: it was waiting, or its attempt was in flight.
	CutShort bool
}

// lastState is a device's last record, kept for its unrecovered loss.
type lastState struct {
	Dev      int32
	At, Due  int64
	Delay    float64
	Outcome  auditfmt.Outcome
	Stage    auditfmt.Stage
	Class    auditfmt.FailureClass
	Reason   int32
	Attempts int32
}

// keepLast keeps the last record of d, the device dev, whose last loss
// ep did not end in a connect.
func (ic *incidentCounter) keepLast(d *Device, dev int32, ep *Episode) {
	if len(d.Events) == 0 {
		return
	}
	e := &d.Events[len(d.Events)-1]
	ls := lastState{Dev: dev, At: e.At, Due: NoTime, Outcome: e.Outcome, Stage: e.Stage, Class: e.Fail, Reason: int32(e.Reason)}
	for i := max(ep.First, 0); i < len(d.Events); i++ {
		if d.Events[i].Outcome == auditfmt.BackoffWait {
			ls.Attempts++
		}
	}
	if e.Outcome == auditfmt.BackoffWait || e.Outcome == auditfmt.RateLimitedWait {
		if n := len(d.Attempts); n > 0 && d.Attempts[n-1].Outcome < 0 {
			a := &d.Attempts[n-1]
			ls.Due, ls.Delay = a.Open, a.Delay+a.Wait
		}
	}
	ic.Last = append(ic.Last, ls)
}

// unrecoveredOf adds to d the devices of the losses ls that are mine and
// never connected after them, with their last states; ix holds the clock
// offsets, and the log's last record (ic.end, NoTime: unknown) says
// which were cut short.
func (ic *incidentCounter) unrecoveredOf(d *incidentDetail, ls []lossEvent, ix clockIndex, mine func(int32) bool) {
	end := ic.end
	seen := newDevSet(ls)
	for _, l := range ls {
		if l.Back != NoTime || !mine(l.Dev) || !seen.add(l.Dev) {
			continue
		}
		k, ok := slices.BinarySearchFunc(ic.Last, l.Dev, func(s lastState, d int32) int { return cmp.Compare(s.Dev, d) })
		if !ok {
			continue
		}
		s := ic.Last[k]
		o := ix.dev(l.Dev, s.At)
		u := Unrecovered{Device: ic.names[l.Dev], At: s.At - o, Stage: s.Stage, Due: s.Due, Delay: s.Delay, Class: s.Class,
			Reason: s.Reason, Attempts: int(s.Attempts)}
		if u.Due != NoTime {
			u.Due -= o
		}
		u.State, u.CutShort = lastStateOf(&s, end)
		if isSessionStage(u.Stage) {
			u.Stage = auditfmt.StageSession
		}
		d.Unrecovered = append(d.Unrecovered, u)
	}
}

// lastStateOf names the state s leaves a device in at the log's end
// (NoTime: unknown, and nothing is cut short), and whether the log
// ended too soon to tell.
func lastStateOf(s *lastState, end int64) (string, bool) {
	switch s.Outcome {
	case auditfmt.BackoffWait, auditfmt.RateLimitedWait:
		switch {
		case s.Due == NoTime:
			return StateSilent, false
		case end == NoTime:
			return StateWaiting, false
		case s.Due > end:
			return StateWaiting, true
		case end-s.Due <= int64(InFlightLimit):
			return StateInFlight, true
		}
		return StateSilent, false
	case auditfmt.Refused:
		return StateRefused, false
	case auditfmt.AttemptFailed:
		return StateFailed, false
	case auditfmt.GaveUp:
		return StateGaveUp, false
	case auditfmt.Stopped:
		return StateStopped, false
	}
	return StateSilent, false
}

// ReasonText names an MQTT CONNACK reason code: MQTT 3.1.1's return codes
// 1 to 5 and MQTT 5's reason codes from 128; "reason code N" for others.
func ReasonText(code int32) string {
	if s, ok := reasonTexts[code]; ok {
		return s
	}
	return "reason code " + strconv.Itoa(int(code))
}

var reasonTexts = map[int32]string{
	0: "success", 1: "unacceptable protocol version", 2: "identifier rejected", 3: "server unavailable",
	4: "bad user name or password", 5: "not authorised",
	128: "unspecified error", 129: "malformed packet", 130: "protocol error", 131: "implementation specific error",
	132: "unsupported protocol version", 133: "client identifier not valid", 134: "bad user name or password",
	135: "not authorized", 136: "server unavailable", 137: "server busy", 138: "banned", 140: "bad authentication method",
	144: "topic name invalid", 149: "packet too large", 151: "quota exceeded", 153: "payload format invalid",
	154: "retain not supported", 155: "QoS not supported", 156: "use another server", 157: "server moved",
	159: "connection rate exceeded", 139: "server shutting down", 141: "keep alive timeout", 142: "session taken over",
	160: "maximum connect time",
}
