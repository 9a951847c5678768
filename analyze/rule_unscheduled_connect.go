package analyze

import (
	"fmt"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

const unscheduledConnectID = "unscheduled-connect"

// The window around an attempt's socket-open in which its connected
// record is explained by it: from UnscheduledEarly before the open
// (logging precision, two threads of one client stamping records) to
// UnscheduledLate after it (the longest connect timeout clients use).
const (
	UnscheduledEarly = 100 * time.Millisecond
	UnscheduledLate  = 30 * time.Second
)

// The window's ends as explanations write them.
var unscheduledEarly, unscheduledLate = UnscheduledEarly.String(), UnscheduledLate.String()

// unscheduledConnect flags connected records that the device's recorded
// schedule does not explain.
type unscheduledConnect struct {
	ended []int         // scratch: per record of a device, the attempt a connected record ended
	found []offSchedule // scratch: a device's connects off its schedule
}

func (*unscheduledConnect) Info() RuleInfo {
	return RuleInfo{ID: unscheduledConnectID, Severity: Warning, Title: "a connect the recorded schedule does not explain",
		Help: "A connected record that no socket-open of the device's recorded schedule explains (none due from 100 ms before it " +
			"to 30 s after), or a second connected record with no loss between: another reconnect loop (often the MQTT library's " +
			"own automatic reconnect) owns the client, so the audited schedule is not what the broker saw."}
}

// offSchedule is one connect the schedule does not explain.
type offSchedule struct {
	conn    int // index in Device.Events of the connected record
	attempt int // index in Device.Attempts of the attempt it ended, -1 if none
	prev    int // for a second connect, the index of the connected record before it; else -1
}

func (r *unscheduledConnect) Device(c *Context, d *Device) {
	// ended[i] is the attempt connected record i ended, -1 if none
	ended := slices.Grow(r.ended[:0], len(d.Events))[:len(d.Events)]
	for i := range ended {
		ended[i] = -1
	}
	r.ended = ended
	for k := range d.Attempts {
		if a := &d.Attempts[k]; a.Outcome >= 0 && d.Events[a.Outcome].Outcome == auditfmt.Connected {
			ended[a.Outcome] = k
		}
	}
	found := r.found[:0]
	defer func() { r.found = found[:0] }()
	up, seen := -1, false // the connected record of the session up; whether a session-stage record came before
	for i := range d.Events {
		e := &d.Events[i]
		if e.Stage != 0 && e.Stage != auditfmt.StageSession {
			continue
		}
		switch e.Outcome {
		case auditfmt.Connected:
			k := ended[i]
			ok := k >= 0
			switch {
			case up >= 0:
				found = append(found, offSchedule{conn: i, attempt: -1, prev: up})
			case ok && !explains(&d.Attempts[k], e.At):
				found = append(found, offSchedule{conn: i, attempt: k, prev: -1})
			case !ok && seen:
				found = append(found, offSchedule{conn: i, attempt: -1, prev: -1})
			}
			up = i
		case auditfmt.RateLimitedWait:
		default:
			up = -1
		}
		seen = true
	}
	if len(found) > 0 {
		c.Report(r.finding(d, found))
	}
}

// explains reports whether attempt a's socket-open explains a connect at t.
func explains(a *Attempt, t int64) bool {
	return t >= a.Open-int64(UnscheduledEarly) && t <= addSat(a.Open, int64(UnscheduledLate))
}

func (r *unscheduledConnect) finding(d *Device, found []offSchedule) Finding {
	var t tally
	var early, late, second, none int
	for _, o := range found {
		e := &d.Events[o.conn]
		switch {
		case o.prev >= 0:
			second++
			t.add(e.At, e.Ref, d.Events[o.prev].Ref)
		case o.attempt >= 0:
			a := &d.Attempts[o.attempt]
			if e.At < a.Open {
				early++
			} else {
				late++
			}
			t.add(e.At, e.Ref, d.Events[a.Backoff].Ref)
		default:
			none++
			t.add(e.At, e.Ref)
		}
	}
	f := t.finding(unscheduledConnectID, Warning, d)
	f.Kind = "unscheduled-connect/no-socket-open-due"
	f.Message = fmt.Sprintf("connected %s when its recorded schedule had no socket-open due", nTimes(len(found)))
	evidence := r.evidence(d, found[0])
	f.explainLater(func(p prose) prose {
		return evidence(p).s(" In all: ").d(int64(early)).s(" before the socket-open due, ").d(int64(late)).
			s(" more than ", unscheduledLate, " after it, ").d(int64(none)).s(" with no attempt pending, ").d(int64(second)).
			s(" a second connected with no loss between. " +
				"Likely cause: a second reconnect loop owns the client, such as the MQTT library's own automatic reconnect " +
				"(paho-mqtt's loop_start() or loop_forever(), paho.mqtt.golang's AutoReconnect) running beside the manager that writes " +
				"the audit records, so the audited schedule is not what the broker saw.")
	})
	return f
}

// evidence returns what describes one unexplained connect, holding
// copies of what it needs of d.
func (r *unscheduledConnect) evidence(d *Device, o offSchedule) func(prose) prose {
	id, at := d.ID, d.Events[o.conn].At
	switch {
	case o.prev >= 0:
		prev := d.Events[o.prev].At
		return func(p prose) prose {
			return p.s(id, " connected at ").time(prev).s(" and again at ").time(at).s(", ").dur(at - prev).
				s(" later, with no disconnected, backoff_wait, attempt_failed or refused record between: a second connect while its session was up.")
		}
	case o.attempt >= 0:
		a := d.Attempts[o.attempt]
		return func(p prose) prose {
			p = p.s(id, "'s recorded schedule would have opened the socket at ").time(a.Open).s(" (backoff_wait at ").time(a.Start).
				s(", attempt ").d(a.Number).s(", delay ").secs(a.Delay).s(" s")
			if a.Wait != 0 {
				p = p.s(", rate-limit waits ").secs(a.Wait).s(" s")
			}
			p = p.s("); it connected at ").time(at).s(", ")
			if at >= a.Open {
				p = p.dur(at - a.Open).s(" after it")
			} else {
				p = p.dur(a.Open - at).s(" before it")
			}
			return p.s(". A connect is explained by a socket-open from ", unscheduledEarly, " before it to ", unscheduledLate, " after it.")
		}
	}
	return func(p prose) prose {
		return p.s(id, " connected at ").time(at).s(" with no attempt pending: no backoff_wait began one since its last failure or loss.")
	}
}

func (*unscheduledConnect) Finish(*Context) {}
