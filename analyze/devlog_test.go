package analyze

import (
	"fmt"
	"strings"
	"time"
)

// devLog writes one device's records into a seed-format log, for rule
// tests: times are seconds from 2026-11-30T14:17:30Z, and each connect
// resolves 50 ms after its socket-open, as in package simulate.
type devLog struct {
	w       *strings.Builder
	dev     string
	t       float64 // now, s from the drop
	attempt int
	last    float64 // the last delay drawn
	clean   bool
}

const devLogLatency = 0.05

func newDevLog(w *strings.Builder, dev string, at float64) *devLog {
	return &devLog{w: w, dev: dev, t: at}
}

// rec writes a record now; extra are further members, like `"ceiling_s": 8`.
func (l *devLog) rec(outcome string, delay float64, extra ...string) *devLog {
	ts := time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC).Add(time.Duration(l.t * 1e9).Round(time.Microsecond))
	fmt.Fprintf(l.w, `{"client_id": %q, "attempt": %d, "backoff_delay_s": %s, "outcome": %q, "clean_session": %t, "recorded_at": %q`,
		l.dev, l.attempt, fmtSeconds(delay), outcome, l.clean, ts.Format("2006-01-02T15:04:05.000000-07:00"))
	for _, e := range extra {
		l.w.WriteString(", " + e)
	}
	l.w.WriteString("}\n")
	return l
}

func (l *devLog) drop() *devLog { return l.rec("disconnected", 0, `"reason_code": 139`) }

// wait draws delay d and moves to the socket-open.
func (l *devLog) wait(d float64, extra ...string) *devLog {
	l.rec("backoff_wait", d, extra...)
	l.t += d
	l.last = d
	return l
}

// fail is a failure 50 ms after the socket-open, counter incremented.
func (l *devLog) fail(outcome string, extra ...string) *devLog {
	l.t += devLogLatency
	l.attempt++
	return l.rec(outcome, l.last, extra...)
}

// connect is a CONNACK 50 ms after the socket-open, the counter reset.
func (l *devLog) connect() *devLog {
	l.t += devLogLatency
	l.attempt = 0
	return l.rec("connected", l.last)
}

// after lets s seconds pass.
func (l *devLog) after(s float64) *devLog { l.t += s; return l }
