package analyze

import (
	"fmt"
	"slices"

	"github.com/stormaudit/stormaudit/auditfmt"
)

const overlappingAttemptsID = "overlapping-attempts"

// stageKey is an attempt_id (hashed) within a stage: stages have their own
// attempts, and may reuse each other's ids.
type stageKey struct {
	stage auditfmt.Stage
	key   uint64
}

// overlappingAttempts flags, from the attempt_id records carry, more than
// one operation in flight in one stage of a device: an attempt opened
// while another of its stage has no outcome yet, an outcome recorded for
// an attempt a newer one had superseded, and an attempt_id used again
// for a new attempt. The maps and lists are the rule's, reused from one
// device to the next.
type overlappingAttempts struct {
	ids  map[stageKey]*inFlight
	pool []inFlight
	open [auditfmt.StageService + 1][]*inFlight // per stage, the attempts with no outcome yet
}

// inFlight is one attempt_id of a device.
type inFlight struct {
	stage   auditfmt.Stage
	order   int // the order it was opened in, within its stage
	open    int // index in Device.Events of the record that opened it
	outcome int // of its outcome record, -1 while it has none
}

// The kinds of overlap, each reported once per device with its count.
type overlapTallies struct {
	overlap, late, lateUp, reuse tally
	first                        [4][2]int // per kind, the two records that show it first: the newer and the older
}

func (*overlappingAttempts) Info() RuleInfo {
	return RuleInfo{ID: overlappingAttemptsID, Severity: Warning, Title: "more than one attempt in flight in one stage",
		Help: "From attempt_id: a device opened an attempt while another of the same stage had no outcome yet, recorded an outcome for " +
			"an attempt a newer one had superseded (an error once the newer one had connected: a late callback of an old attempt), or used " +
			"one attempt_id for two attempts. A well-run reconnect keeps one operation in flight per stage, each with its own id."}
}

func (r *overlappingAttempts) Finish(*Context) {}

func (r *overlappingAttempts) Device(c *Context, d *Device) {
	if !slices.ContainsFunc(d.Events, func(e Event) bool { return e.AttemptKey != 0 }) {
		return
	}
	clear(r.ids)
	r.pool = r.pool[:0]
	for s := range r.open {
		r.open[s] = r.open[s][:0]
	}
	var t overlapTallies
	var opened, connected [auditfmt.StageService + 1]int // per stage: attempts opened; 1 + the order of the newest that connected
	for i := range d.Events {
		e := &d.Events[i]
		if e.Outcome == auditfmt.GaveUp || e.Outcome == auditfmt.Stopped {
			for s := range r.open {
				r.open[s] = r.open[s][:0] // the loop ended: what was in flight is abandoned
			}
			continue
		}
		if e.AttemptKey == 0 {
			continue
		}
		st := e.Stage
		if st == 0 {
			st = auditfmt.StageSession
		}
		a := r.ids[stageKey{st, e.AttemptKey}]
		switch {
		case a == nil:
			a = r.add(stageKey{st, e.AttemptKey})
			r.opens(d, &t, a, i, opened[st])
			opened[st]++
		case a.outcome >= 0 && e.Outcome == auditfmt.BackoffWait:
			t.reuse.add(e.At, e.Ref, d.Events[a.open].Ref)
			t.mark(3, i, a.open)
			r.opens(d, &t, a, i, opened[st])
			opened[st]++
		}
		if !isOutcome(e.Outcome) || a.outcome >= 0 && a.order == opened[st]-1 {
			continue
		}
		if a.order < opened[st]-1 { // a newer attempt of the stage was opened before this outcome
			k, tl := 1, &t.late
			if connected[st]-1 > a.order {
				k, tl = 2, &t.lateUp
			}
			tl.add(e.At, e.Ref, d.Events[a.open].Ref)
			t.mark(k, i, a.open)
		}
		if a.outcome < 0 {
			a.outcome = i
			r.open[st] = slices.DeleteFunc(r.open[st], func(x *inFlight) bool { return x == a })
		}
		if e.Outcome == auditfmt.Connected {
			connected[st] = max(connected[st], a.order+1)
		}
	}
	r.report(c, d, &t)
}

// add records a new attempt_id of a stage.
func (r *overlappingAttempts) add(key stageKey) *inFlight {
	if len(r.pool) == cap(r.pool) {
		r.pool = make([]inFlight, 0, max(64, 2*cap(r.pool))) // earlier entries stay where the map points
	}
	r.pool = append(r.pool, inFlight{stage: key.stage})
	a := &r.pool[len(r.pool)-1]
	r.ids[key] = a
	return a
}

// opens records that the record at i opened attempt a, the order-th of
// its stage, and counts an overlap if another of its stage is in flight.
func (r *overlappingAttempts) opens(d *Device, t *overlapTallies, a *inFlight, i, order int) {
	a.order, a.open, a.outcome = order, i, -1
	if o := r.open[a.stage]; len(o) > 0 {
		t.overlap.add(d.Events[i].At, d.Events[i].Ref, d.Events[o[len(o)-1].open].Ref)
		t.mark(0, i, o[len(o)-1].open)
	}
	r.open[a.stage] = append(r.open[a.stage], a)
}

// mark keeps the first pair of records of kind k.
func (t *overlapTallies) mark(k, newer, older int) {
	tl := [...]*tally{&t.overlap, &t.late, &t.lateUp, &t.reuse}[k]
	if tl.n == 1 {
		t.first[k] = [2]int{newer, older}
	}
}

func isOutcome(o auditfmt.Outcome) bool {
	return o == auditfmt.Connected || o == auditfmt.AttemptFailed || o == auditfmt.Refused
}

func (r *overlappingAttempts) report(c *Context, d *Device, t *overlapTallies) {
	kinds := []struct {
		tl       *tally
		sev      Severity
		kind     string
		msg, why string
	}{
		{&t.overlap, Warning, "overlapping-attempts/opened-while-pending", "attempt opened while another of its stage had no outcome yet",
			"opened a %s-stage attempt with the %s record at %s while the attempt opened by the %s record at %s had no outcome yet: two operations in flight in one stage"},
		{&t.late, Warning, "overlapping-attempts/superseded-outcome", "outcome recorded for an attempt a newer one had superseded",
			"recorded the %s record at %s as the outcome of an attempt (opened by the %s record at %s) that a newer %s-stage attempt had already superseded"},
		{&t.lateUp, Error, "overlapping-attempts/outcome-after-newer-connect", "outcome of an old attempt after a newer one connected",
			"recorded the %s record at %s as the outcome of an attempt (opened by the %s record at %s) after a newer %s-stage attempt had already connected: " +
				"a late callback of an old attempt, which must never restart it"},
		{&t.reuse, Warning, "overlapping-attempts/attempt-id-reused", "one attempt_id used for two attempts",
			"began a new %s-stage attempt with the %s record at %s under the attempt_id of the attempt opened by the %s record at %s, which already had its outcome"},
	}
	for k, kd := range kinds {
		if kd.tl.n == 0 {
			continue
		}
		newer, older := &d.Events[t.first[k][0]], &d.Events[t.first[k][1]]
		st := newer.Stage
		if st == 0 {
			st = auditfmt.StageSession
		}
		f := kd.tl.finding(overlappingAttemptsID, kd.sev, d, newer.Ref, older.Ref)
		f.Kind = kd.kind
		f.Message = fmt.Sprintf("%s (%s)", kd.msg, countNoun(kd.tl.n, "time", "times"))
		var first string
		if k == 1 || k == 2 {
			first = fmt.Sprintf(kd.why, newer.Outcome, fmtTime(newer.At), older.Outcome, fmtTime(older.At), st)
		} else {
			first = fmt.Sprintf(kd.why, st, newer.Outcome, fmtTime(newer.At), older.Outcome, fmtTime(older.At))
		}
		f.Explanation = fmt.Sprintf("%s first %s (the records are told apart by their attempt_id). In all: %s. "+
			"A well-run reconnect keeps at most one operation in flight per stage, each with its own attempt_id, and ignores the callbacks of "+
			"attempts it has given up on.", d.ID, first, countNoun(kd.tl.n, "time", "times"))
		c.Report(f)
	}
}
