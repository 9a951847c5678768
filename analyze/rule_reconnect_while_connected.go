package analyze

import (
	"fmt"

	"github.com/stormaudit/stormaudit/auditfmt"
)

const reconnectWhileConnectedID = "reconnect-while-connected"

func init() { register(func() Rule { return &reconnectWhileConnected{} }) }

// reconnectWhileConnected flags attempts that begin while the session is
// up: a backoff_wait after a connected record with no record between that
// ends the session.
type reconnectWhileConnected struct{}

func (r *reconnectWhileConnected) Info() RuleInfo {
	return RuleInfo{ID: reconnectWhileConnectedID, Severity: Warning, Title: "new attempt while the session is up",
		Help: "After a connected record the device backs off and connects again with no disconnected, attempt_failed or refused " +
			"record between: reconnect churn, two reconnect loops owning one client, or a stale callback; " +
			"if the session really was lost, the record of it is missing."}
}

// churn is what reconnect-while-connected found on one device.
type churn struct {
	tally
	conn, wait int // indices in Device.Events of the first occurrence: the connected record and the backoff_wait
}

func (r *reconnectWhileConnected) Device(c *Context, d *Device) {
	var m churn
	up := -1 // index of the connected record of the session that is up
	for i := range d.Events {
		e := &d.Events[i]
		switch e.Outcome {
		case auditfmt.Connected:
			up = i
		case auditfmt.Disconnected, auditfmt.AttemptFailed, auditfmt.Refused, auditfmt.GaveUp, auditfmt.Stopped:
			up = -1
		case auditfmt.BackoffWait:
			if up >= 0 {
				m.add(e.At, e.Ref, d.Events[up].Ref)
				m.span(d.Events[up].At)
				if m.n == 1 {
					m.conn, m.wait = up, i
				}
			}
			up = -1
		}
	}
	if m.n > 0 {
		c.Report(r.finding(d, &m))
	}
}

func (r *reconnectWhileConnected) finding(d *Device, m *churn) Finding {
	conn, wait := &d.Events[m.conn], &d.Events[m.wait]
	f := m.finding(reconnectWhileConnectedID, Warning, d)
	f.Message = fmt.Sprintf("began %s while its session was up", countNoun(m.n, "new attempt", "new attempts"))
	f.Explanation = fmt.Sprintf("%s connected at %s and wrote backoff_wait (attempt %d, %s s) at %s, %s s later, "+
		"with no disconnected, attempt_failed or refused record between: either the session was lost and its record is missing, "+
		"or a second reconnect loop owns the client. It happened %s in all.",
		d.ID, fmtTime(conn.At), wait.Attempt, fmtSeconds(wait.Delay), fmtTime(wait.At), fmtSeconds(float64(wait.At-conn.At)/1e9), countNoun(m.n, "time", "times"))
	return f
}

func (r *reconnectWhileConnected) Finish(*Context) {}
