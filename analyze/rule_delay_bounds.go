package analyze

import (
	"fmt"
	"math"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

const delayBoundsID = "delay-bounds"

// The tolerances of delay-bounds (docs/rules.md): a value
// may miss its bound by one unit of the last decimal place the device
// writes its values to (rounding or truncating a draw to it moves it by
// less), at least loggedTolMin, the microseconds real clients log with,
// and at most a millisecond (loggedUnits), for a client that logs
// milliseconds; plus floatSlack times the value, for the binary
// representation of decimals.
const (
	loggedTolMin = 1e-6 // s
	floatSlack   = 1e-9
)

// inferredMargin is the share of a bound by which a value may exceed it
// when the policy is inferred: inference reads the ceilings off the
// largest delays drawn, which fall short of them by about 1/n of n draws,
// and rounds the multiplier to two decimals.
const inferredMargin = 0.1

// loggedUnits are the decimal places, coarsest first, whose unit can be a
// device's tolerance above loggedTolMin.
var loggedUnits = [...]float64{1e3, 1e4, 1e5}

// delayBounds flags drawn delays outside the policy's bounds, and ceilings
// written in records that disagree with the policy's.
type delayBounds struct {
	sampler *policy.Sampler // c.Policy's bounds, cached
	of      *policy.Policy  // the policy sampler was made of
	// formulas caches the texts of the policy's formulas: thousands of
	// devices' findings quote the same few
	formulas    map[formulaKey]string
	againstText string // checkedAgainst of the policy
}

// formulaKey names a formula's text: the bounds' (or the ceiling's) at
// an attempt number, after a delay drawn (only decorrelated jitter's
// bounds depend on it; its bits, so that -0 and NaN are keys too).
type formulaKey struct {
	ceiling bool
	number  int64
	prev    uint64
}

// formula returns the text of the bounds' formula (ceilingFormula when
// ceiling) at attempt number a after prev, from the cache.
func (r *delayBounds) formula(p *policy.Policy, ceiling bool, a int64, prev float64) string {
	if ceiling || p.Delay != policy.Decorrelated {
		prev = 0
	}
	k := formulaKey{ceiling, a, math.Float64bits(prev)}
	if s, ok := r.formulas[k]; ok {
		return s
	}
	s := ceilingFormula(p, a)
	if !ceiling {
		s = boundsFormula(p, a, prev)
	}
	if len(r.formulas) >= maxFormulas {
		clear(r.formulas) // jittered prevs are all distinct: bounded, not grown without end
	}
	r.formulas[k] = s
	return s
}

// maxFormulas bounds the formulas delay-bounds keeps.
const maxFormulas = 1024

func (r *delayBounds) Info() RuleInfo {
	return RuleInfo{ID: delayBoundsID, Severity: Error, Needs: [][]string{{"delay"}}, Uses: []string{"auth_min_delay_s"}, Title: "drawn delay outside the policy's bounds",
		Help: "A backoff_wait whose delay lies outside the interval the declared (or inferred) policy draws from at that attempt, " +
			"or whose ceiling_s disagrees with the policy's ceiling: the client does not run the policy the fleet was sized for."}
}

// boundsMiss gathers the misses of one kind on one device, and the worst.
type boundsMiss struct {
	tally
	worst, by, prev float64 // the value, how far outside, the delay drawn before it
	attempt         int     // index in Device.Attempts
	above, below    int
	total           int // attempts checked
}

func (m *boundsMiss) note(d *Device, i int, value, by, prev float64) {
	a := &d.Attempts[i]
	m.add(a.Start, d.Events[a.Backoff].Ref)
	if m.n == 1 || by > m.by {
		m.worst, m.by, m.prev, m.attempt = value, by, prev, i
	}
}

func (r *delayBounds) Device(c *Context, d *Device) {
	if !hasSessionAttempts(d) {
		return
	}
	if _, ok := c.Param(delayBoundsID, "delay", noValue); !ok {
		return
	}
	var after []int
	if authScheduled(c.Policy) || c.Inferred {
		// drawn on the authentication schedule, which the policy's
		// auth_min_delay_s governs and inference leaves out
		after = authRetries(d)
	}
	if r.of != c.Policy {
		r.sampler, r.of, r.formulas, r.againstText = c.Policy.Sampler(), c.Policy, map[formulaKey]string{}, ""
	}
	k := boundsCheck{p: c.Policy, s: r.sampler,
		tol:  loggedTolerance(d, func(a *Attempt) float64 { return a.Delay }),
		ctol: loggedTolerance(d, func(a *Attempt) float64 { return a.Ceiling })}
	if c.Inferred {
		k.margin = inferredMargin
	}
	prev := 0.0
	for i := range d.Attempts {
		a := &d.Attempts[i]
		if !isSessionStage(a.Stage) {
			continue
		}
		before := prev
		prev = a.Delay
		if after == nil || after[i] < 0 {
			k.attempt(d, i, before)
		}
	}
	if k.out.n > 0 {
		c.Report(r.delayFinding(c, d, &k))
	}
	if k.ceil.n > 0 {
		c.Report(r.ceilingFinding(c, d, &k))
	}
}

// severity is Error against a declared policy and Warning against an
// inferred one, whose bounds are estimates.
func (r *delayBounds) severity(c *Context) Severity {
	if c.Inferred {
		return Warning
	}
	return Error
}

// boundsCheck checks one device's attempts against a policy.
type boundsCheck struct {
	p         *policy.Policy
	s         *policy.Sampler // p's bounds, cached
	tol, ctol float64         // the device's tolerances for delays and for ceilings
	margin    float64         // the share of a bound an inferred policy allows beyond it
	out, ceil boundsMiss
}

// attempt checks attempt i of d, drawn after prev.
func (k *boundsCheck) attempt(d *Device, i int, prev float64) {
	a := &d.Attempts[i]
	k.out.total++
	lo, hi := k.s.Bounds(a.Number, prev)
	if by := max(a.Delay-hi-k.margin*hi, lo-a.Delay); by > k.tol+floatSlack*max(1, a.Delay) {
		k.out.note(d, i, a.Delay, max(a.Delay-hi, lo-a.Delay), prev)
		if a.Delay > hi {
			k.out.above++
		} else {
			k.out.below++
		}
	}
	if math.IsNaN(a.Ceiling) {
		return
	}
	k.ceil.total++
	want := k.s.Ceiling(a.Number)
	if by := math.Abs(a.Ceiling - want); by > k.ctol+k.margin*want+floatSlack*max(1, want) {
		k.ceil.note(d, i, a.Ceiling, by, prev)
	}
}

// appendTolerance explains the tolerance tol of a check with the margin of an
// inferred policy, for explanations.
func appendTolerance(p prose, tol, margin float64) prose {
	p = p.secs(tol).s(" s (one unit of the last decimal place the device writes these values to, 1 µs to 1 ms)")
	if margin > 0 {
		p = fmt.Appendf(p, " plus %g%% of the bound, the margin of an inferred policy", margin*100)
	}
	return p
}

// against returns checkedAgainst(c), once for the policy.
func (r *delayBounds) against(c *Context) string {
	if r.againstText == "" {
		r.againstText = checkedAgainst(c)
	}
	return r.againstText
}

func (r *delayBounds) delayFinding(c *Context, d *Device, k *boundsCheck) Finding {
	m := &k.out
	a := &d.Attempts[m.attempt]
	lo, hi := c.Policy.Bounds(a.Number, m.prev)
	f := m.finding(delayBoundsID, r.severity(c), d, d.Events[a.Backoff].Ref)
	f.Kind = "delay-bounds/delay-outside-bounds"
	f.Message = string(prose(make([]byte, 0, 128)).d(int64(m.n)).s(" of ").count(m.total, "delay", "delays").
		s(" outside the policy's bounds (").d(int64(m.above)).s(" above, ").d(int64(m.below)).s(" below); the worst ").
		secs(m.worst).s(" s at attempt ").d(a.Number).s(", bounds [").secs(lo).s(", ").secs(hi).s("] s"))
	id, number, start, formula, against := d.ID, a.Number, a.Start, r.formula(c.Policy, false, a.Number, m.prev), r.against(c)
	worst, by, tol, margin, total, n, above, below := m.worst, m.by, k.tol, k.margin, m.total, m.n, m.above, m.below
	f.explainLater(func(p prose) prose {
		p = p.s(id, " drew ").secs(worst).s(" s at attempt ").d(number).s(" (backoff_wait at ").time(start).s("); ", formula, ". ").
			s("It is ").secs(by).s(" s outside them, beyond the tolerance of ")
		return appendTolerance(p, tol, margin).s(". Of its ").count(total, "delay", "delays").s(" checked, ").d(int64(n)).
			s(" lay outside their bounds, ").d(int64(above)).s(" above and ").d(int64(below)).s(" below. Checked against the ", against, ".")
	})
	return f
}

func (r *delayBounds) ceilingFinding(c *Context, d *Device, k *boundsCheck) Finding {
	m := &k.ceil
	a := &d.Attempts[m.attempt]
	want := c.Policy.Ceiling(a.Number)
	f := m.finding(delayBoundsID, r.severity(c), d, d.Events[a.Backoff].Ref)
	f.Kind = "delay-bounds/ceiling-mismatch"
	f.Message = fmt.Sprintf("ceiling_s disagrees with the policy on %d of %s; the worst %s s at attempt %d, where the policy's ceiling is %s s",
		m.n, countNoun(m.total, "record", "records"), fmtSeconds(m.worst), a.Number, fmtSeconds(want))
	id, number, start, formula, against := d.ID, a.Number, a.Start, r.formula(c.Policy, true, a.Number, 0), r.against(c)
	worst, by, tol, margin, total, n := m.worst, m.by, k.ctol, k.margin, m.total, m.n
	f.explainLater(func(p prose) prose {
		p = p.s(id, " wrote ceiling_s ").secs(worst).s(" s at attempt ").d(number).s(" (backoff_wait at ").time(start).
			s("); the policy's ceiling at attempt ").d(number).s(" is ", formula, ". They differ by ").secs(by).s(" s, beyond the tolerance of ")
		return appendTolerance(p, tol, margin).s(". Of its ").count(total, "record", "records").s(" with a ceiling_s, ").d(int64(n)).
			s(" disagree: the client computes its ceiling differently from the policy. Checked against the ", against, ".")
	})
	return f
}

// noValue is a Context.Param value function for keys a rule only needs to
// know are declared or inferred.
func noValue(*policy.Policy) float64 { return 0 }

// hasSessionAttempts reports whether d has an attempt of the session stage.
func hasSessionAttempts(d *Device) bool {
	for i := range d.Attempts {
		if isSessionStage(d.Attempts[i].Stage) {
			return true
		}
	}
	return false
}

// isSessionStage reports whether s is the MQTT session stage (a record
// without a stage is of the session stage).
func isSessionStage(s auditfmt.Stage) bool { return s == 0 || s == auditfmt.StageSession }

// loggedTolerance returns the tolerance for one kind of value of d's
// session attempts (NaN values are skipped): the unit of the last decimal
// place they are all written to, between loggedTolMin and a millisecond.
func loggedTolerance(d *Device, val func(*Attempt) float64) float64 {
	for _, unit := range loggedUnits {
		n, whole := 0, true
		for i := range d.Attempts {
			v := val(&d.Attempts[i])
			if math.IsNaN(v) || !isSessionStage(d.Attempts[i].Stage) {
				continue
			}
			n++
			if x := v * unit; math.Abs(x-math.Round(x)) > 1e-6 {
				whole = false
				break
			}
		}
		if n > 0 && whole {
			return 1 / unit
		}
	}
	return loggedTolMin
}

// checkedAgainst says which policy a rule checked against, for
// explanations.
func checkedAgainst(c *Context) string {
	if c.Inferred {
		return "policy inferred from the log (give --policy FILE to check against the declared one)"
	}
	if c.Policy.Name != "" {
		return fmt.Sprintf("declared policy %q", c.Policy.Name)
	}
	return "declared policy"
}

// ceilingFormula explains p.Ceiling(a) with its numbers.
func ceilingFormula(p *policy.Policy, a int64) string {
	switch p.Delay {
	case policy.None:
		return "0 s (delay none)"
	case policy.Fixed:
		return fmt.Sprintf("base_delay_s = %s s (delay fixed)", fmtSeconds(p.BaseDelayS))
	case policy.Decorrelated:
		return fmt.Sprintf("max_delay_s = %s s (delay decorrelated_jitter)", fmtSeconds(p.MaxDelayS))
	}
	e := max(a, 0)
	if p.ImmediateFirstRetry {
		if e == 0 {
			return "0 s (immediate_first_retry)"
		}
		e--
	}
	return fmt.Sprintf("min(%s, %s*%s^%d) = %s s", fmtSeconds(p.MaxDelayS), fmtSeconds(p.BaseDelayS),
		fmtSeconds(p.Multiplier), e, fmtSeconds(p.Ceiling(a)))
}

// boundsFormula explains p.Bounds(a, prev) with its numbers.
func boundsFormula(p *policy.Policy, a int64, prev float64) string {
	lo, hi := p.Bounds(a, prev)
	iv := fmt.Sprintf("[%s, %s] s", fmtSeconds(lo), fmtSeconds(hi))
	switch p.Delay {
	case policy.Exponential:
		return fmt.Sprintf("the exponential rule draws exactly the ceiling %s, so the bounds are %s", ceilingFormula(p, a), iv)
	case policy.FullJitter:
		return fmt.Sprintf("the full_jitter rule draws from [min(min_delay_s %s, ceiling), ceiling] with the ceiling %s, so %s",
			fmtSeconds(p.MinDelayS), ceilingFormula(p, a), iv)
	case policy.EqualJitter:
		return fmt.Sprintf("the equal_jitter rule draws from [ceiling/2, ceiling] with the ceiling %s, so %s", ceilingFormula(p, a), iv)
	case policy.Decorrelated:
		return fmt.Sprintf("the decorrelated_jitter rule draws from [min(base, cap), min(cap, max(base, 3*prev))] "+
			"with base %s, cap %s and prev %s s (the delay drawn before), so %s",
			fmtSeconds(p.BaseDelayS), fmtSeconds(p.MaxDelayS), fmtSeconds(prev), iv)
	}
	return fmt.Sprintf("the %s rule's bounds are %s", p.Delay, iv)
}

// tally gathers the occurrences of one problem on one device, for one
// aggregated finding: how many, the time they span, and the first
// MaxRefs records.
type tally struct {
	n          int
	start, end int64
	nrefs      int          // refs[:nrefs] are held
	refs       [MaxRefs]Ref // in place: a tally is made for every device a rule looks at
}

// add counts an occurrence at the given time resting on refs.
func (t *tally) add(at int64, refs ...Ref) {
	if t.n == 0 || at < t.start {
		t.start = at
	}
	if t.n == 0 || at > t.end {
		t.end = at
	}
	t.n++
	for _, r := range refs {
		if t.nrefs < MaxRefs {
			t.refs[t.nrefs] = r
			t.nrefs++
		}
	}
}

// span widens the time the tally covers to at.
func (t *tally) span(at int64) {
	t.start, t.end = min(t.start, at), max(t.end, at)
}

// finding returns a finding over the tally with the lead records first.
func (t *tally) finding(rule string, sev Severity, d *Device, lead ...Ref) Finding {
	refs := append(make([]Ref, 0, min(MaxRefs, len(lead)+t.nrefs)), lead...)
	for _, r := range t.refs[:t.nrefs] {
		if len(refs) < MaxRefs && !containsRef(refs, r) {
			refs = append(refs, r)
		}
	}
	return Finding{Rule: rule, Severity: sev, Device: d.ID, Start: t.start, End: t.end, Records: refs}
}

func containsRef(refs []Ref, r Ref) bool {
	for _, x := range refs {
		if x == r {
			return true
		}
	}
	return false
}

func (r *delayBounds) Finish(*Context) {}
