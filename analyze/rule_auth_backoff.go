package analyze

import (
	"fmt"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

const authBackoffID = "auth-backoff"

// authBackoff flags authentication failures retried on the network-error
// schedule.
type authBackoff struct{}

func (r *authBackoff) Info() RuleInfo {
	return RuleInfo{ID: authBackoffID, Severity: Warning, Needs: [][]string{{"auth_min_delay_s", "delay"}}, Title: "authentication failures retried on the network schedule",
		Help: "A device refused for bad credentials retries as soon as after a network error: sooner than auth_min_delay_s, " +
			"or, when the policy declares none, no later than the network schedule's ceiling. " +
			"Bad credentials do not fix themselves; a fleet that retries them fast loads the broker's authentication path for nothing."}
}

// authMiss is what auth-backoff found on one device.
type authMiss struct {
	tally
	retries int // retries after an authentication failure
	worst   int // index in Device.Attempts of the shortest retry flagged
	fail    int // index in Device.Events of its authentication failure
}

func (r *authBackoff) Device(c *Context, d *Device) {
	after := authRetries(d)
	var m authMiss
	minimum := authScheduled(c.Policy)
	for i, k := range after {
		if k < 0 {
			continue
		}
		if m.retries++; m.retries == 1 && !minimum {
			if _, ok := c.Param(authBackoffID, "delay", noValue); !ok {
				return
			}
			c.Note(authBackoffID, "auth_min_delay_s is not declared: a retry after an authentication failure is flagged "+
				"when its delay is no longer than the network schedule's ceiling at that attempt")
		}
		a := &d.Attempts[i]
		if !r.tooSoon(c.Policy, a, minimum) {
			continue
		}
		m.add(a.Start, d.Events[a.Backoff].Ref, d.Events[k].Ref)
		m.span(d.Events[k].At)
		if m.n == 1 || a.Delay < d.Attempts[m.worst].Delay {
			m.worst, m.fail = i, k
		}
	}
	if m.n > 0 {
		c.Report(r.finding(c, d, &m, minimum))
	}
}

// tooSoon reports whether a, a retry after an authentication failure,
// came too soon: before auth_min_delay_s when the policy declares one
// (minimum), else no later than the network schedule's ceiling.
func (r *authBackoff) tooSoon(p *policy.Policy, a *Attempt, minimum bool) bool {
	if minimum {
		return a.Delay < p.AuthMinDelayS-loggedTolMin-floatSlack*p.AuthMinDelayS
	}
	return a.Delay <= p.Ceiling(a.Number)+loggedTolMin+floatSlack*a.Delay
}

func (r *authBackoff) finding(c *Context, d *Device, m *authMiss, minimum bool) Finding {
	a, fail := &d.Attempts[m.worst], &d.Events[m.fail]
	f := m.finding(authBackoffID, Warning, d, d.Events[a.Backoff].Ref, fail.Ref)
	var test string
	if minimum {
		f.Kind = "auth-backoff/below-auth-min-delay"
		f.Message = fmt.Sprintf("%d of %s after an authentication failure came sooner than auth_min_delay_s %s s; the shortest %s s",
			m.n, countNoun(m.retries, "retry", "retries"), fmtSeconds(c.Policy.AuthMinDelayS), fmtSeconds(a.Delay))
		test = fmt.Sprintf("the policy declares auth_min_delay_s = %s s, and the test is delay >= auth_min_delay_s",
			fmtSeconds(c.Policy.AuthMinDelayS))
	} else {
		f.Kind = "auth-backoff/network-schedule"
		f.Message = fmt.Sprintf("%d of %s after an authentication failure no longer than the network schedule's ceiling; the shortest %s s",
			m.n, countNoun(m.retries, "retry", "retries"), fmtSeconds(a.Delay))
		test = fmt.Sprintf("auth_min_delay_s is not declared, so the test is whether it backed off harder than the network schedule, "+
			"whose ceiling at attempt %d is %s: %s s is not above it", a.Number, ceilingFormula(c.Policy, a.Number), fmtSeconds(a.Delay))
	}
	f.Explanation = fmt.Sprintf("%s got %s at %s and retried after %s s at attempt %d (backoff_wait at %s); %s. "+
		"Of its %s after an authentication failure, %d came too soon. Checked against the %s.",
		d.ID, authFailureText(fail), fmtTime(fail.At), fmtSeconds(a.Delay), a.Number, fmtTime(a.Start), test,
		countNoun(m.retries, "retry", "retries"), m.n, checkedAgainst(c))
	return f
}

// authScheduled reports whether p declares a minimum delay after an
// authentication failure, so that retries after one follow that schedule
// rather than the network one.
func authScheduled(p *policy.Policy) bool {
	return p != nil && p.Declared("auth_min_delay_s") && p.AuthMinDelayS > 0
}

// authReason reports whether a CONNACK reason code refuses credentials:
// 4 (bad user name or password) and 5 (not authorized) in MQTT 3.1.1,
// 134 and 135, the same in MQTT 5.
func authReason(code int16) bool { return code == 4 || code == 5 || code == 134 || code == 135 }

// authFailure reports whether e is an authentication failure: an
// attempt_failed or refused record of failure class auth, or a refused
// record whose reason code refuses credentials.
func authFailure(e *Event) bool {
	switch e.Outcome {
	case auditfmt.AttemptFailed:
		return e.Fail == auditfmt.FailAuth
	case auditfmt.Refused:
		return e.Fail == auditfmt.FailAuth || authReason(e.Reason)
	}
	return false
}

// authFailureText describes an authentication failure record.
func authFailureText(e *Event) string {
	s := e.Outcome.String()
	if e.Fail != 0 {
		s += ", failure_class " + e.Fail.String()
	}
	if e.Reason >= 0 {
		s += fmt.Sprintf(", reason code %d", e.Reason)
	}
	return "an authentication failure (" + s + ")"
}

// authRetries returns, for each attempt of d, the index in d.Events of the
// authentication failure it retries after (the last failure record since
// the previous backoff_wait or connected record), or -1.
func authRetries(d *Device) []int {
	out := make([]int, 0, len(d.Attempts))
	last := -1
	for i := range d.Events {
		e := &d.Events[i]
		switch e.Outcome {
		case auditfmt.AttemptFailed, auditfmt.Refused:
			last = -1
			if authFailure(e) {
				last = i
			}
		case auditfmt.Connected:
			last = -1
		case auditfmt.BackoffWait:
			out = append(out, last)
			last = -1
		}
	}
	return out
}

func (r *authBackoff) Finish(*Context) {}
