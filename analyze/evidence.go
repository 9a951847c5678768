package analyze

import (
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// PromptConnect is how soon after its socket-open the one attempt of an
// inferred loss must connect, with nothing failed, for the loss to be
// taken for churn: the device reconnecting while connected (docs/rules.md,
// "Evidence of a loss").
const PromptConnect = time.Second

// judgeLosses weighs the evidence of each inferred loss of one stage's
// episodes (in Events' order) and sets Churn and Lost.
//
// A loss needs evidence: a disconnected record (not inferred), an attempt
// that failed or was refused, a give-up, more than one attempt, or an
// attempt that did not connect within PromptConnect of its socket-open
// while the device went on writing. Without any, the episode is churn.
// A device with churn chose its backoff_waits: its inferred losses are
// dated from their first socket-open, not from the backoff_wait.
func (d *Device) judgeLosses(eps []Episode) {
	churner := false
	for i := range eps {
		ep := &eps[i]
		ep.Lost, ep.Churn = ep.Start, false
		if ep.Inferred && !d.evidenced(ep) {
			ep.Churn, churner = true, true
		}
	}
	if !churner {
		return
	}
	for i := range eps {
		ep := &eps[i]
		if !ep.Inferred || ep.Churn {
			continue
		}
		if a := d.attemptOf(ep.First); a != nil && a.Open > ep.Start {
			ep.Lost = a.Open
			if ep.End != NoTime {
				ep.Lost = min(ep.Lost, ep.End)
			}
		}
	}
}

// evidenced reports whether an inferred loss has evidence (see judgeLosses).
func (d *Device) evidenced(ep *Episode) bool {
	if ep.Attempts > 1 {
		return true
	}
	a := d.attemptOf(ep.First)
	if a == nil {
		return true
	}
	stage := d.Events[ep.First].Stage
	last := len(d.Events) - 1
	if ep.Last >= 0 {
		last = ep.Last
	}
	for i := ep.First + 1; i <= last; i++ {
		e := &d.Events[i]
		if !sameStage(e.Stage, stage) {
			continue
		}
		switch e.Outcome {
		case auditfmt.AttemptFailed, auditfmt.Refused, auditfmt.GaveUp:
			return true
		case auditfmt.Stopped:
			// stopped before its attempt could tell, or after it had not
			// connected in time
			return e.At > addSat(a.Open, int64(PromptConnect))
		}
	}
	prompt := addSat(a.Open, int64(PromptConnect))
	if ep.End != NoTime {
		return ep.End > prompt
	}
	return d.Events[len(d.Events)-1].At > prompt
}

// attemptOf returns the attempt whose backoff_wait is event i, or nil.
func (d *Device) attemptOf(i int) *Attempt {
	lo, hi := 0, len(d.Attempts)
	for lo < hi {
		m := (lo + hi) / 2
		if d.Attempts[m].Backoff < i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(d.Attempts) && d.Attempts[lo].Backoff == i {
		return &d.Attempts[lo]
	}
	return nil
}

// sameStage reports whether two records' stages are one (absent is the
// session stage).
func sameStage(a, b auditfmt.Stage) bool {
	return a == b || isSessionStage(a) && isSessionStage(b)
}
