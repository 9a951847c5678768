package analyze

import (
	"fmt"

	"github.com/stormaudit/stormaudit/auditfmt"
)

const resetWithoutConnackID = "reset-without-connack"

// stableResetTol is the tolerance of the stable-recovery test: the
// microsecond timestamps are written to.
const stableResetTol = int64(1000) // ns

// resetWithoutConnack flags attempt counters that drop without a
// successful CONNACK, or before the session stayed up the stable-recovery
// interval the policy declares.
type resetWithoutConnack struct{}

func (r *resetWithoutConnack) Info() RuleInfo {
	return RuleInfo{ID: resetWithoutConnackID, Severity: Error, Uses: []string{"stable_reset_s"}, Title: "attempt counter reset without a CONNACK",
		Help: "The attempt counter drops with no connected record since its last value, or sooner after the connected record " +
			"than the policy's stable_reset_s. A counter that resets on anything but a successful (and, if declared, stable) session " +
			"keeps the device at the short delays of its first attempts: it never backs off."}
}

// counterDrop is one drop of a device's attempt counter.
type counterDrop struct {
	from, to int // indices in Device.Events: the last counter record before it, and the record that dropped
	conn     int // the connected record between them, -1 if none
}

// resetMiss is one kind of drop on one device.
type resetMiss struct {
	tally
	first counterDrop // the first drop, or for early resets the one after the shortest session
}

func (r *resetWithoutConnack) Device(c *Context, d *Device) {
	stable := r.stableReset(c)
	var bare, early resetMiss
	last, conn := -1, -1
	for i := range d.Events {
		e := &d.Events[i]
		switch e.Outcome {
		case auditfmt.Connected:
			conn = i
		case auditfmt.GaveUp, auditfmt.Stopped:
			last = -1 // the client's loop ended; a new one starts its counter afresh
		case auditfmt.BackoffWait, auditfmt.AttemptFailed, auditfmt.Refused:
			if !isSessionStage(e.Stage) {
				continue
			}
			if last >= 0 && e.Attempt < d.Events[last].Attempt {
				r.drop(c, d, counterDrop{from: last, to: i, conn: conn}, stable, &bare, &early)
			}
			last = i
		}
	}
	if bare.n > 0 {
		c.Report(r.bareFinding(d, &bare))
	}
	if early.n > 0 {
		c.Report(r.earlyFinding(c, d, &early, stable))
	}
}

// drop sorts a counter drop into bare (no connected record since the
// counter's last value) or early (sooner than stable seconds after it).
func (r *resetWithoutConnack) drop(c *Context, d *Device, k counterDrop, stable float64, bare, early *resetMiss) {
	ev := d.Events
	if k.conn < k.from {
		bare.add(ev[k.to].At, ev[k.to].Ref, ev[k.from].Ref)
		bare.span(ev[k.from].At)
		if bare.n == 1 {
			bare.first = k
		}
		return
	}
	if stable < 0 {
		c.Note(resetWithoutConnackID, c.undeclared("stable_reset_s")+
			" to check counter resets after a connected record against a stable-recovery interval")
		return
	}
	up := ev[k.to].At - ev[k.conn].At
	if stable == 0 || up >= nanos(stable)-stableResetTol {
		return
	}
	early.add(ev[k.to].At, ev[k.to].Ref, ev[k.conn].Ref)
	early.span(ev[k.conn].At)
	if early.n == 1 || up < ev[early.first.to].At-ev[early.first.conn].At {
		early.first = k
	}
}

// stableReset returns the declared stable_reset_s: 0 when a declared
// policy leaves it out (the counter resets on CONNACK), -1 when no policy
// is declared.
func (r *resetWithoutConnack) stableReset(c *Context) float64 {
	switch {
	case c.Policy == nil || c.Inferred:
		return -1
	case c.Policy.Declared("stable_reset_s"):
		return c.Policy.StableResetS
	}
	return 0
}

func (r *resetWithoutConnack) bareFinding(d *Device, m *resetMiss) Finding {
	from, to := &d.Events[m.first.from], &d.Events[m.first.to]
	f := m.finding(resetWithoutConnackID, Error, d)
	f.Kind = "reset-without-connack/no-connack"
	f.Message = fmt.Sprintf("attempt counter dropped without a connected record (%s); the first from %d to %d",
		countNoun(m.n, "time", "times"), from.Attempt, to.Attempt)
	id, a, b, n := d.ID, *from, *to, m.n
	f.explainLater(func(p prose) prose {
		return appendFall(p, id, &a, &b).s(" with no connected record between: "+
			"the counter may reset only on a successful CONNACK. It dropped without one ").count(n, "time", "times").s(" in all.")
	})
	return f
}

func (r *resetWithoutConnack) earlyFinding(c *Context, d *Device, m *resetMiss, stable float64) Finding {
	from, to, conn := &d.Events[m.first.from], &d.Events[m.first.to], &d.Events[m.first.conn]
	up := float64(to.At-conn.At) / 1e9
	f := m.finding(resetWithoutConnackID, Error, d, to.Ref, conn.Ref)
	f.Kind = "reset-without-connack/before-stable-reset"
	f.Message = fmt.Sprintf("attempt counter reset before the session stayed up stable_reset_s %s s (%s); the shortest session %s s",
		fmtSeconds(stable), countNoun(m.n, "time", "times"), fmtSeconds(up))
	id, a, b, connAt, n, against := d.ID, *from, *to, conn.At, m.n, checkedAgainst(c)
	f.explainLater(func(p prose) prose {
		return appendFall(p, id, &a, &b).s(", ").secs(up).s(" s after the connected record at ").time(connAt).
			s(" began its session; the policy declares stable_reset_s = ").secs(stable).
			s(" s, so the counter may reset only once a session has stayed up that long. It reset too early ").
			count(n, "time", "times").s(" in all. Checked against the ", against, ".")
	})
	return f
}

func (r *resetWithoutConnack) Finish(*Context) {}

// appendFall appends how device id's attempt counter fell from a to b.
func appendFall(p prose, id string, a, b *Event) prose {
	return p.s(id, "'s attempt counter fell from ").d(a.Attempt).s(" (", a.Outcome.String(), " at ").time(a.At).
		s(") to ").d(b.Attempt).s(" (", b.Outcome.String(), " at ").time(b.At).s(")")
}
