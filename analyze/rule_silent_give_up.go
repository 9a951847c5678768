package analyze

import (
	"fmt"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// GiveUpGrace is how long after a device's next record was due the log
// must run on before silent-give-up holds its silence against it: the
// connect latency, a slow connect timeout, a collection that stopped a
// little early.
const GiveUpGrace = 60 * time.Second

// silentGiveUp flags devices that stop attempting without a gave_up or
// stopped record. Whether a device fell silent depends on the end of the
// log, known only in Finish, so Device keeps a summary of each device that
// did not end connected or with gave_up/stopped.
type silentGiveUp struct {
	Quiet []quietDevice
	grace time.Duration // GiveUpGrace unless set (Tunable)
}

func (r *silentGiveUp) merge(next Rule) {
	r.Quiet = append(r.Quiet, next.(*silentGiveUp).Quiet...)
}

func (r *silentGiveUp) Thresholds() []Threshold {
	return []Threshold{{Name: "grace_s", Default: GiveUpGrace.Seconds(), Min: 0, Max: 7 * 86400,
		Help: "how long after a device's next record was due the log must run on before its silence counts"}}
}

func (r *silentGiveUp) SetThreshold(name string, v float64) {
	if name == "grace_s" {
		r.grace = seconds(v)
	}
}

// quietDevice is the end of a device's records: its last record, and when
// the record after it was due.
type quietDevice struct {
	ID   string
	Last Event
	Due  int64 // Unix ns
	Bw   *Event
}

func (r *silentGiveUp) Info() RuleInfo {
	return RuleInfo{ID: "silent-give-up", Severity: Error, Title: "a device that stops attempting without a gave_up or stopped record",
		Help: "The device's last record leaves it retrying (a failure, a disconnect, or a backoff_wait whose socket-open was due) " +
			"and the log runs on more than " + spanText(r.grace) + " past when its next record was due, with nothing from it and no gave_up or " +
			"stopped record. A device that quits retrying without saying so stays offline unnoticed."}
}

func (r *silentGiveUp) Device(_ *Context, d *Device) {
	n := len(d.Events)
	if n == 0 {
		return
	}
	last := d.Events[n-1]
	q := quietDevice{ID: strings.Clone(d.ID), Last: last, Due: last.At}
	switch last.Outcome {
	case auditfmt.Connected, auditfmt.GaveUp, auditfmt.Stopped:
		return
	case auditfmt.BackoffWait, auditfmt.RateLimitedWait:
		q.Due = last.At + nanos(last.Delay)
		if k := len(d.Attempts) - 1; k >= 0 && d.Attempts[k].Outcome < 0 {
			a := &d.Attempts[k]
			q.Due = a.Open
			if b := d.Events[a.Backoff]; a.Backoff != n-1 {
				q.Bw = &b
			}
		}
	}
	r.Quiet = append(r.Quiet, q)
}

func (r *silentGiveUp) Finish(c *Context) {
	for i := range r.Quiet {
		q := &r.Quiet[i]
		if c.End-q.Due > int64(r.grace) {
			c.Report(q.finding(c.End, r.grace))
		}
	}
	r.Quiet = nil
}

// finding reports q's silence up to end, the end of the log.
func (q *quietDevice) finding(end int64, grace time.Duration) Finding {
	e := &q.Last
	f := Finding{Rule: "silent-give-up", Kind: "silent-give-up/stopped-silently", Severity: Error, Device: q.ID, Start: e.At, End: end, Records: []Ref{e.Ref}}
	f.Message = fmt.Sprintf("stopped attempting after %s at %s without a gave_up or stopped record", e.Outcome, timeText(e.At))
	var next string
	switch e.Outcome {
	case auditfmt.AttemptFailed, auditfmt.Refused:
		next = fmt.Sprintf("a failure (attempt counter %d%s): the reference client writes the next backoff_wait at the same instant", e.Attempt, failText(e))
	case auditfmt.Disconnected:
		next = "a disconnect: the reference client writes its first backoff_wait at the same instant"
	case auditfmt.BackoffWait:
		next = fmt.Sprintf("the backoff_wait of attempt %d (delay %s s), so its socket-open was due at %s and its outcome soon after",
			e.Attempt, ftoa(e.Delay), timeText(q.Due))
	default:
		next = fmt.Sprintf("a wait the rate limit imposed (%s s), so its socket-open was due at %s and its outcome soon after", ftoa(e.Delay), timeText(q.Due))
		if q.Bw != nil {
			f.Records = append(f.Records, q.Bw.Ref)
			next += fmt.Sprintf(" (attempt %d began with a backoff_wait at %s, delay %s s)", q.Bw.Attempt, timeText(q.Bw.At), ftoa(q.Bw.Delay))
		}
	}
	f.Explanation = fmt.Sprintf("The device's last record is %s at %s, %s. Nothing follows from the device, yet the log runs on to %s, "+
		"%s after the next record was due (more than the %s grace), and no gave_up or stopped record says it quit.",
		e.Outcome, timeText(e.At), next, timeText(end), durText(end-q.Due), durText(int64(grace)))
	return f
}

// failText names the failure class and reason code of a failure record.
func failText(e *Event) string {
	var s string
	if e.Fail != 0 {
		s += ", failure class " + e.Fail.String()
	}
	if e.Reason >= 0 {
		s += fmt.Sprintf(", reason code %d", e.Reason)
	}
	return s
}
