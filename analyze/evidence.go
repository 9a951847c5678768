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

// evidence is what an inferred loss rests on, weakest first.
type evidence uint8

const (
	noEvidence   evidence = iota // none: churn
	slowConnect                  // its one attempt did not connect within PromptConnect
	failedOrMany                 // an attempt failed, was refused or gave up, or more than one was made
)

// judgeLosses weighs the evidence of each inferred loss of one stage's
// episodes (in Events' order) and sets Churn and Lost.
//
// A loss needs evidence: a disconnected record (not inferred), an attempt
// that failed or was refused, a give-up, more than one attempt, or an
// attempt that did not connect within PromptConnect of its socket-open
// while the device went on writing. Without any, the episode is churn.
// A device with churn chose some of its backoff_waits: its inferred
// losses whose only evidence is a slow connect, or whose backoff_wait
// came within ReorderWindow of the connected record before it (a new
// delay drawn on connecting: the loss met the attempt, the attempt did
// not answer a loss), are dated from their first socket-open, not from
// the backoff_wait. A loss with failed attempts (or several) after a
// session that lasted is dated by its own evidence, from its
// backoff_wait, whatever the device did elsewhere.
func (d *Device) judgeLosses(eps []Episode) {
	churner := false
	var slow []int // the inferred losses dated from their socket-open if the device churns
	for i := range eps {
		ep := &eps[i]
		ep.Lost, ep.Churn = ep.Start, false
		if !ep.Inferred {
			continue
		}
		switch d.evidenced(ep) {
		case noEvidence:
			ep.Churn, churner = true, true
		case slowConnect:
			slow = append(slow, i)
		default:
			if d.drawnOnConnect(ep) {
				slow = append(slow, i)
			}
		}
	}
	if !churner {
		return
	}
	for _, i := range slow {
		ep := &eps[i]
		if a := d.attemptOf(ep.First); a != nil && a.Open > ep.Start {
			ep.Lost = a.Open
			if ep.End != NoTime {
				ep.Lost = min(ep.Lost, ep.End)
			}
		}
	}
}

// drawnOnConnect reports whether the backoff_wait that began ep came
// within ReorderWindow of the connected record of its stage before it.
func (d *Device) drawnOnConnect(ep *Episode) bool {
	stage := d.Events[ep.First].Stage
	for i := ep.First - 1; i >= 0; i-- {
		if e := &d.Events[i]; sameStage(e.Stage, stage) {
			gap := ep.Start - e.At
			return e.Outcome == auditfmt.Connected && gap < int64(ReorderWindow) && gap > -int64(ReorderWindow)
		}
	}
	return false
}

// evidenced says what an inferred loss rests on (see judgeLosses).
func (d *Device) evidenced(ep *Episode) evidence {
	if ep.Attempts > 1 {
		return failedOrMany
	}
	a := d.attemptOf(ep.First)
	if a == nil {
		return failedOrMany
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
			return failedOrMany
		case auditfmt.Stopped:
			// stopped before its attempt could tell, or after it had not
			// connected in time
			if e.At > addSat(a.Open, int64(PromptConnect)) {
				return slowConnect
			}
			return noEvidence
		}
	}
	prompt := addSat(a.Open, int64(PromptConnect))
	end := d.Events[len(d.Events)-1].At
	if ep.End != NoTime {
		end = ep.End
	}
	if end > prompt {
		return slowConnect
	}
	return noEvidence
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
