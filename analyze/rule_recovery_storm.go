package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/internal/radix"
	"github.com/stormaudit/stormaudit/policy"
)

const recoveryStormID = "recovery-storm"

// The thresholds of recovery-storm (docs/rules.md): a peak of successful
// connects in one StormWindow is a storm when it holds at least StormMin
// connects, more than StormFactor times the most the policy's draws put
// in any such window, and is that unlikely (StormTail, summed over the
// windows of the recovery) for a Poisson count with that mean.
const (
	StormWindow = time.Second
	StormMin    = 10
	StormFactor = 3.0
	StormTail   = 1e-3
	// stormBin is the resolution of the expected-density histogram, and
	// stormSpan the longest recovery it covers.
	stormBin  = 10 * time.Millisecond
	stormSpan = time.Hour
	// stormSteps bounds how many failed draws the schedule of one device
	// is carried forward by to reach the broker's return.
	stormSteps = 64
)

// recoveryStorm flags incidents after which the fleet's successful connects
// bunch far beyond what the policy's draws allow. Device keeps, for every
// loss that a connect ended, the connect and the schedule it was drawn
// from; Finish judges each incident.
type recoveryStorm struct {
	Devices int32 // devices seen: a stormLoss's Dev is its ordinal among them
	Losses  []stormLoss
	sorted  bool // Losses are in time order: presort ran
	// Apart is true once the losses were taken apart with the incidents
	// (Partial.TakeIncidents): each incident is judged apart
	// (Split.JudgeStorm), and Judged holds the verdicts put back
	Apart  bool
	Judged []stormJudged
}

// presort sorts the losses by time, then by line.
func (r *recoveryStorm) presort() {
	r.Losses = byTime(r.Losses, func(l *stormLoss) int64 { return l.LossAt }, func(a, b stormLoss) int { return compareLines(a.Ref, b.Ref) })
	r.sorted = true
}

func (r *recoveryStorm) merge(next Rule) {
	n := next.(*recoveryStorm)
	for _, l := range n.Losses {
		l.Dev += r.Devices
		r.Losses = append(r.Losses, l)
	}
	r.Devices += n.Devices
	r.Judged = append(r.Judged, n.Judged...)
}

// stormLoss is one loss: when it began, the connect that ended it, and
// the attempt pending then (what the device was drawing from). A loss
// not recovered when the log ends is kept too (Conn NoTime) when its
// last attempt was still pending: its draw belongs to the expectation,
// else a log cut during the recovery would show only the devices that
// drew short.
type stormLoss struct {
	LossAt, Conn int64
	Ref          Ref
	Dev          int32 // the device's ordinal in the read, to correct its clock by
	// the pending attempt: its backoff_wait's time, the waits imposed on
	// it, its number, its delay, and the delay drawn before it (s)
	Start       int64
	Wait        float64
	Number      int64
	Delay, Prev float64
	HasAttempt  bool
	Connected   bool // the connect was this attempt's outcome
}

func (*recoveryStorm) Info() RuleInfo {
	return RuleInfo{ID: recoveryStormID, Severity: Error, Needs: [][]string{{"delay"}}, Title: "the fleet's connects bunch after an incident beyond what the policy allows",
		Help: "After an incident, more successful connects in one second than the policy's draws could put there: at least 10, over 3 times " +
			"the expected most (from the delay each device was drawing from when the broker came back), and improbable by chance. " +
			"The fleet hit the returning broker in phase, whatever its recorded delays say; a second reconnect loop " +
			"(the MQTT library's own) is the usual cause."}
}

func (r *recoveryStorm) Device(_ *Context, d *Device) {
	dev := r.Devices
	r.Devices++
	k, prev := 0, 0.0 // the next session attempt to look at; the delay drawn before it
	for i := range d.Episodes {
		ep := &d.Episodes[i]
		if !ep.Loss() {
			continue
		}
		last, ref := ep.Last, ep.First
		if last < 0 { // not recovered when the log ends
			last = len(d.Events)
		} else {
			ref = last
		}
		l := stormLoss{LossAt: ep.Lost, Conn: ep.End, Ref: d.Events[ref].Ref, Dev: dev}
		// the pending attempt: the last of the session stage begun within
		// the episode, before the connect that ended it
		pending := false
		for ; k < len(d.Attempts) && d.Attempts[k].Backoff < last; k++ {
			a := &d.Attempts[k]
			if !isSessionStage(a.Stage) {
				continue
			}
			if a.Backoff >= ep.First {
				l.Start, l.Wait, l.Number, l.Delay, l.Prev, l.HasAttempt = a.Start, a.Wait, a.Number, a.Delay, prev, true
				l.Connected = ep.Last >= 0 && a.Outcome == ep.Last
				pending = a.Outcome < 0
			}
			prev = a.Delay
		}
		if ep.End == NoTime && !pending {
			continue // not back, and drawing nothing when the log ends
		}
		r.Losses = push(r.Losses, l)
	}
}

func (r *recoveryStorm) Finish(c *Context) {
	incs := c.Fleet.Incidents
	if len(incs) == 0 {
		return
	}
	if _, ok := c.Param(recoveryStormID, "delay", noValue); !ok {
		return
	}
	if r.Apart {
		r.finishApart(c)
		return
	}
	moved := false
	if ix := c.Fleet.clocks(); ix.byDev != nil { // on the incidents' clock
		for i := range r.Losses {
			if o := ix.dev(r.Losses[i].Dev, r.Losses[i].LossAt); o != 0 {
				r.Losses[i].move(o)
				moved = true
			}
		}
	}
	if moved || !r.sorted {
		r.presort()
	}
	for k := range incs {
		in := &incs[k]
		if in.FirstConnectAt == NoTime {
			continue
		}
		lo, _ := slices.BinarySearchFunc(r.Losses, in.LostAt, func(l stormLoss, t int64) int { return cmp.Compare(l.LossAt, t) })
		hi, _ := slices.BinarySearchFunc(r.Losses, in.LastLoss+1, func(l stormLoss, t int64) int { return cmp.Compare(l.LossAt, t) })
		s, ok := judgeStorm(c.Policy, r.Losses[lo:hi], in.FirstConnectAt)
		s.put(c, in, ok)
	}
	r.Losses = nil
}

// put gives in what s weighed of its return, and reports it if ok (a
// storm).
func (s storm) put(c *Context, in *Incident, ok bool) {
	if s.devices > 0 {
		in.Storm = &StormWeighed{Recoveries: s.observed, At: s.at, Expected: s.expected, ExpectedAt: s.expectedAt,
			Chance: min(1, s.tail), Inferred: c.Inferred, Stormed: ok}
	}
	if ok {
		c.Report(s.finding(in, c))
	}
}

// finishApart puts the verdicts judged apart on their incidents, in
// incident order (Split.Finish has checked that every incident some part
// sent losses of has one, once).
func (r *recoveryStorm) finishApart(c *Context) {
	incs := c.Fleet.Incidents
	slices.SortFunc(r.Judged, func(a, b stormJudged) int { return cmp.Compare(a.Inc, b.Inc) })
	for _, j := range r.Judged {
		if j.Inc < 0 || int(j.Inc) >= len(incs) {
			c.Note(recoveryStormID, fmt.Sprintf("a verdict of incident %d, of %d incidents, was not read", j.Inc+1, len(incs)))
			continue
		}
		j.storm().put(c, &incs[j.Inc], j.Stormed)
	}
}

// stormJudged is an incident's verdict as JudgeStorm sends it.
type stormJudged struct {
	Inc                    int32
	Observed, Devices, Own int
	At, ExpectedAt         int64
	Windows                int
	Expected, Tail         float64
	Refs                   []Ref
	Stormed                bool
}

func judgedOf(k int32, s storm, ok bool) stormJudged {
	return stormJudged{Inc: k, Observed: s.observed, Devices: s.devices, Own: s.own, At: s.at, ExpectedAt: s.expectedAt,
		Windows: s.windows, Expected: s.expected, Tail: s.tail, Refs: s.refs, Stormed: ok}
}

func (j stormJudged) storm() storm {
	return storm{observed: j.Observed, devices: j.Devices, own: j.Own, at: j.At, expectedAt: j.ExpectedAt, windows: j.Windows,
		expected: j.Expected, tail: j.Tail, refs: j.Refs}
}

// StormWeighed is what recovery-storm weighed of an incident's return
// (Incident.Storm): the recoveries it counted, and what the policy's
// draws expect. Recoveries count each lost device's first connect after
// its loss, so they may peak lower than Incident.ConnectsPeak, which
// counts every connected record (a device that connects again, churn).
type StormWeighed struct {
	// Recoveries is the most recoveries in one second [At, +1 s).
	Recoveries int
	At         int64
	// Expected is the most the policy's draws put in one second
	// [ExpectedAt, +1 s) (docs/rules.md, recovery-storm).
	Expected   float64
	ExpectedAt int64
	// Chance is the probability of so many recoveries in one of the
	// recovery's seconds by chance (a Poisson tail), 0 when not weighed
	// (fewer than StormMin).
	Chance float64
	// Inferred is true when the policy was inferred from the log
	// (PolicyInfo.Basis says from what), not declared.
	Inferred bool
	// Stormed is true when recovery-storm flagged the return.
	Stormed bool
}

// storm is what judgeStorm found of one incident's recovery.
type storm struct {
	observed   int     // the most connects in one window
	at         int64   // that window's start
	expected   float64 // the most the policy's draws put in one window
	expectedAt int64
	windows    int     // windows of the recovery the peak was looked for in
	tail       float64 // P(Poisson(expected) >= observed) × windows
	devices    int
	refs       []Ref
	// own counts the connects of the observed second that the attempt the
	// device recorded made: its outcome, at or after its socket-open (a
	// connect before it is another loop's, as unscheduled-connect says)
	own int
}

// judgeStorm compares the connects that ended ls, the losses of an
// incident whose broker came back at back (sorted by time, then line),
// with what the policy's draws allow.
func judgeStorm(p *policy.Policy, ls []stormLoss, back int64) (storm, bool) {
	sp := reduceStorm(p, ls, back, false)
	return sp.judge(back)
}

// stormPart is what some of an incident's losses tell recovery-storm:
// the density of connects their draws expect (a difference array of
// stormUnit by stormBin from the broker's return), the latest end of
// those draws, and their recoveries in the losses' order. Parts of an
// incident's losses merge (merge) to what all of them tell: integers
// add in any order.
type stormPart struct {
	Dens  []int64
	MaxHi int64 // the latest end of a draw; the return itself if none is later
	Conns []stormConn
	// losses are the losses themselves when the part is judged where it
	// was reduced (check): their recoveries are read from them, not
	// copied into Conns
	losses []stormLoss
}

// stormConn is a recovery: the connect that ended a loss, the loss, its
// record, and whether the attempt the device recorded made it (at or
// after its socket-open).
type stormConn struct {
	Conn, LossAt int64
	Ref          Ref
	Own          bool
}

// reduceStorm returns what the losses ls of an incident whose broker came
// back at back (sorted by time, then line) tell recovery-storm, their
// recoveries copied out when send is true (the part travels), else read
// from ls where it is judged. Each draw's share is cut at back +
// stormSpan, which is where the incident's own reckoning cuts it however
// many losses it has (expectedPeak).
func reduceStorm(p *policy.Policy, ls []stormLoss, back int64, send bool) stormPart {
	sp := stormPart{MaxHi: back}
	if !send {
		sp.losses = ls
	}
	bin, cut := int64(stormBin), back+int64(stormSpan)
	for i := range ls {
		l := &ls[i]
		if send && l.Conn != NoTime {
			sp.Conns = append(sp.Conns, l.recovery())
		}
		lo, hi := pendingWindow(p, l, back)
		sp.MaxHi = max(sp.MaxHi, hi)
		if lo >= cut && hi > lo {
			continue // beyond the recovery looked at: in none of its windows
		}
		lo = min(lo, cut)
		a, b := float64(lo-back)/float64(bin), float64(min(hi, cut)-back)/float64(bin)
		if need := int(b) + 3; len(sp.Dens) < need {
			sp.Dens = slices.Grow(sp.Dens, max(need, 2*len(sp.Dens))-len(sp.Dens))[:need]
		}
		if b-a < 1e-9 {
			k := int(a)
			sp.Dens[k] += stormUnit
			sp.Dens[k+1] -= stormUnit
			continue
		}
		addUniform(sp.Dens, a, b, 1/(b-a))
	}
	return sp
}

// move moves l by o onto the fleet's clock: its loss, its recovery if
// it had one (NoTime stays NoTime), and its pending attempt.
func (l *stormLoss) move(o int64) {
	l.LossAt, l.Start = l.LossAt-o, l.Start-o
	if l.Conn != NoTime {
		l.Conn -= o
	}
}

// recovery returns the recovery of l, which a connect ended.
func (l *stormLoss) recovery() stormConn {
	own := l.HasAttempt && l.Connected && l.Conn >= addSat(l.Start, nanos(l.Delay)+nanos(l.Wait))-int64(UnscheduledEarly)
	return stormConn{Conn: l.Conn, LossAt: l.LossAt, Ref: l.Ref, Own: own}
}

// recoveries calls fn with each recovery of sp, in the losses' order.
func (sp *stormPart) recoveries(fn func(c stormConn)) {
	if sp.losses == nil {
		for _, c := range sp.Conns {
			fn(c)
		}
		return
	}
	for i := range sp.losses {
		if l := &sp.losses[i]; l.Conn != NoTime {
			fn(l.recovery())
		}
	}
}

// merge adds o, what other losses of the same incident tell, to sp; the
// recoveries are in the losses' order again once every part is merged
// and settle is called.
func (sp *stormPart) merge(o *stormPart) {
	if len(sp.Dens) < len(o.Dens) {
		sp.Dens = append(sp.Dens, make([]int64, len(o.Dens)-len(sp.Dens))...)
	}
	for k, v := range o.Dens {
		sp.Dens[k] += v
	}
	sp.MaxHi = max(sp.MaxHi, o.MaxHi)
	sp.Conns = append(sp.Conns, o.Conns...)
}

// settle puts the recoveries merged into sp in the losses' order (by
// time, then line), those of equal order in the order merged.
func (sp *stormPart) settle() {
	slices.SortStableFunc(sp.Conns, func(a, b stormConn) int { return cmp.Or(cmp.Compare(a.LossAt, b.LossAt), compareLines(a.Ref, b.Ref)) })
}

// judge compares the recoveries of sp, of an incident whose broker came
// back at back, with what the policy's draws allow.
func (sp *stormPart) judge(back int64) (storm, bool) {
	conns := make([]int64, 0, max(len(sp.Conns), len(sp.losses)))
	sp.recoveries(func(c stormConn) { conns = append(conns, c.Conn) })
	if len(conns) == 0 {
		return storm{}, false
	}
	radix.Int64s(conns)
	w := int64(StormWindow)
	s := storm{devices: len(conns)}
	s.observed, s.at = peakPerWindow(conns, math.MinInt64+1, NoTime, w)
	s.expected, s.expectedAt, s.windows = sp.expectedPeak(back)
	if s.observed < StormMin {
		return s, false
	}
	s.tail = poissonTail(s.expected, s.observed) * float64(s.windows)
	if float64(s.observed) <= StormFactor*s.expected || s.tail >= StormTail {
		return s, false
	}
	sp.recoveries(func(c stormConn) {
		if c.Conn >= s.at && c.Conn < s.at+w {
			if len(s.refs) < MaxRefs {
				s.refs = append(s.refs, c.Ref)
			}
			if c.Own {
				s.own++ // at or after the attempt's own socket-open
			}
		}
	})
	return s, true
}

// expectedPeak returns the most connects the policy's draws put in one
// StormWindow after back, where, and the number of windows the recovery
// spans. Each device connects at a time drawn uniformly from the window
// of the attempt it was drawing from when the broker came back (its
// pending attempt, carried forward a draw at a time while that window
// ended before back), cut to begin at back; a draw with no spread is a
// point. The density is summed in fixed point (stormUnit), so that the
// sum is the same in any order of the losses: a sum of parts merged in
// another order must give the same figure.
func (sp *stormPart) expectedPeak(back int64) (float64, int64, int) {
	bin := int64(stormBin)
	end := min(sp.MaxHi, back+int64(stormSpan))
	n := int((end-back)/bin) + 2
	per := int(int64(StormWindow) / bin)
	var run, best, cum int64
	bestAt := 0
	bins := make([]int64, n)
	for k := range n {
		if k < len(sp.Dens) {
			cum += sp.Dens[k]
		}
		bins[k] = cum
	}
	for k := range n {
		run += bins[k]
		if k >= per {
			run -= bins[k-per]
		}
		if run > best {
			best, bestAt = run, max(0, k-per+1)
		}
	}
	// said to the millionth of a connect, far finer than the draws'
	// microseconds resolve and far coarser than the rounding of each
	// device's share: a density that sums to 1/8 is 0.125, not 0.1249999...
	expected := math.Round(float64(best)/stormUnit*1e6) / 1e6
	return expected, back + int64(bestAt)*bin, max(1, int((end-back+int64(StormWindow)-1)/int64(StormWindow)))
}

// stormUnit is the fixed point of recovery-storm's expected density: a
// device's expected connects in one bin, in units of 2^-32 of a connect.
// Integers add exactly, in any order; a fleet would need 2^31 devices to
// overflow the sum, and each device's share is rounded by at most 2^-33
// of a connect a term (four terms a device).
const stormUnit = 1 << 32

// addUniform adds a density of rate per bin over the bins [a, b) of a
// difference array in stormUnit (a and b in bins, fractional). Each
// amount is rounded once, and the same amount is taken off where its bins
// end, so that the differences add up to nothing past b.
func addUniform(dens []int64, a, b, rate float64) {
	fixed := func(x float64) int64 { return int64(math.Round(x * stormUnit)) }
	ia, ib := int(a), int(b)
	if ia == ib {
		v := fixed(rate * (b - a))
		dens[ia] += v
		dens[ia+1] -= v
		return
	}
	first, whole, last := fixed(rate*(float64(ia+1)-a)), fixed(rate), fixed(rate*(b-float64(ib)))
	dens[ia] += first // the partial first bin
	dens[ia+1] -= first
	dens[ia+1] += whole // the whole bins
	dens[ib] -= whole
	dens[ib] += last // the partial last bin
	dens[ib+1] -= last
}

// pendingWindow returns the times [lo, hi] at which the policy let the
// device of l open its socket once the broker was back at back. The
// attempt's recorded draw says where its socket-open fell: at or after
// back (or when the attempt's outcome is the connect itself), the draw is
// uniform over the part of its window from back on; before back, the open
// failed (the broker was not back) and the device drew again from it, each further draw carried forward from the middle of
// its window while that window ended before back.
func pendingWindow(p *policy.Policy, l *stormLoss, back int64) (int64, int64) {
	if !l.HasAttempt {
		at := max(l.Conn, back)
		return at, at
	}
	start, number, prev, wait := l.Start, l.Number, l.Prev, nanos(l.Wait)
	if open := addSat(start, nanos(l.Delay)+wait); open < back && !l.Connected {
		start, number, prev, wait = open, number+1, l.Delay, 0
		for step := 0; step < stormSteps; step++ {
			lo, hi := p.Bounds(number, prev)
			if addSat(start, nanos(hi)) >= back {
				break
			}
			d := (lo + hi) / 2
			start, number, prev = addSat(start, nanos(d)), number+1, d
		}
	}
	lo, hi := p.Bounds(number, prev)
	return max(addSat(start, nanos(lo)+wait), back), max(addSat(start, nanos(hi)+wait), back)
}

// poissonTail returns P(X >= k) for X Poisson with mean m.
func poissonTail(m float64, k int) float64 {
	if m <= 0 {
		return 0
	}
	// the sum of the terms from k on; they fall once past the mean
	logTerm := float64(k)*math.Log(m) - m - lgamma(float64(k)+1)
	term, sum := math.Exp(logTerm), 0.0
	for i := k; i < k+10000 && term > sum*1e-16; i++ {
		sum += term
		term *= m / float64(i+1)
	}
	return min(1, sum)
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// finding reports the storm after incident in.
func (s storm) finding(in *Incident, c *Context) Finding {
	src := "declared"
	if c.Inferred {
		src = "inferred"
	}
	f := Finding{Rule: recoveryStormID, Kind: "recovery-storm/bunched-connects", Severity: Error, Device: Fleet, Start: s.at, End: s.at + int64(StormWindow), Records: s.refs}
	f.Message = fmt.Sprintf("%d devices connected in the 1s from %s after the incident at %s; the policy's draws put at most %.1f in any second",
		s.observed, fmtTime(s.at), fmtTime(in.LostAt), s.expected)
	f.Explanation = fmt.Sprintf("Of the %d devices the incident at %s took down, %d recovered; the broker was back at %s (the first connect). "+
		"Each device was then drawing its next socket-open from its pending attempt's window under the %s policy (%s): the window of the "+
		"draw it recorded, cut to begin at the broker's return, or, if that draw's socket-open came before the return, the next draw's; "+
		"spread uniformly over those windows, the fleet's "+
		"connects would number at most %.2f in any 1s (from %s). Observed: %d in the 1s from %s, %.1f× that. For a Poisson count of mean %.2f, "+
		"%d or more in one of the recovery's %d seconds has probability %.2g (a storm needs at least %d connects, over %.0f× the expected, "+
		"at a probability below %g). The fleet hit the returning broker in phase, whatever its recorded delays say: ",
		in.DevicesLost, fmtTime(in.LostAt), in.Recovered, fmtTime(in.FirstConnectAt), src, c.Policy.Summary(), s.expected, fmtTime(s.expectedAt),
		s.observed, fmtTime(s.at), float64(s.observed)/max(s.expected, 1e-9), s.expected, s.observed, s.windows, s.tail,
		StormMin, StormFactor, StormTail)
	if s.own == s.observed {
		// every connect was its recorded attempt's own: no second loop made them
		f.Explanation += fmt.Sprintf("each of the %d connects came from the attempt its device recorded, at or after its socket-open, so no "+
			"second reconnect loop made them; look for a shared timer, or attempts held back until the return (a gateway or proxy queueing "+
			"connects).", s.observed)
	} else {
		f.Explanation += fmt.Sprintf("%d of the %d connects came before the socket-open of the attempt the device recorded: look for a second "+
			"reconnect loop (the MQTT library's own automatic reconnect; see unscheduled-connect) or a shared timer.", s.observed-s.own, s.observed)
	}
	return f
}
