package analyze

import (
	"fmt"
	"math"
	"slices"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

// inferredKeys are the policy keys infer can find in a log.
var inferredKeys = map[string]bool{"delay": true, "base_delay_s": true, "max_delay_s": true, "multiplier": true}

// inferAttempts is how many attempt numbers inference looks at.
const inferAttempts = 32

// inference gathers, per attempt number, what the backoff_wait records
// say: the delays drawn and the largest ceiling.
type inference struct {
	delays  [inferAttempts][]float64
	maxCeil [inferAttempts]float64
	cap     float64 // the largest delay or ceiling overall
	capCeil bool    // the cap is a ceiling a record carried, not a delay drawn
	draws   int     // the draws looked at
	devices int     // the devices that drew them
}

func (in *inference) add(d *Device) {
	drew := false
	defer func() {
		if drew {
			in.devices++
		}
	}()
	for i := range d.Attempts {
		a := &d.Attempts[i]
		if a.AfterErr == auditfmt.FailAuth || a.Number < 0 {
			continue // drawn on the authentication schedule
		}
		drew = true
		in.draws++
		if a.Delay > in.cap {
			in.cap, in.capCeil = a.Delay, false
		}
		if !math.IsNaN(a.Ceiling) && a.Ceiling >= in.cap {
			in.cap, in.capCeil = a.Ceiling, true
		}
		if a.Number >= inferAttempts {
			continue
		}
		in.delays[a.Number] = append(in.delays[a.Number], a.Delay)
		if !math.IsNaN(a.Ceiling) {
			in.maxCeil[a.Number] = max(in.maxCeil[a.Number], a.Ceiling)
		}
	}
}

// policy returns the policy the log shows, or nil if it shows none
// (docs/rules.md, Terms, "Policy", is the exact rule).
//
// The ceilings come from the ceiling_s the records carry when they do
// (and records whose ceiling is the cap at every attempt show decorrelated
// jitter). Otherwise from the delays: when devices drew different delays
// at one attempt number the policy jitters (full_jitter is assumed), and
// the ceiling at an attempt is the topQuantile of the delays drawn at it
// over topQuantile, leaving out values three or more devices drew exactly
// (a minority on a fixed schedule); without jitter it is the median delay
// itself. The base and multiplier come from a weighted least-squares line
// through the log ceilings, and estimated values snap to round ones within
// their error; the cap is the largest delay or ceiling seen.
func (in *inference) policy() (*policy.Policy, []string) {
	if len(in.delays[0]) == 0 || len(in.delays[1]) == 0 {
		return nil, nil
	}
	jitter := false
	for k := range inferAttempts {
		ds := in.delays[k]
		for _, d := range ds {
			jitter = jitter || d != ds[0]
		}
	}
	if jitter {
		for k := range in.delays {
			in.delays[k] = drawn(in.delays[k])
		}
	}
	if jitter && in.decorrelatedCeilings() {
		return in.decorrelated()
	}
	var top [inferAttempts]float64
	for k := range top {
		switch {
		case len(in.delays[k]) == 0:
		case in.maxCeil[0] > 0 && in.maxCeil[1] > 0:
			top[k] = in.maxCeil[k]
		case jitter:
			top[k] = quantile(in.delays[k], topQuantile) / topQuantile
		default:
			top[k] = median(in.delays[k])
		}
	}
	p := &policy.Policy{Name: "inferred", Delay: policy.FullJitter, BaseDelayS: round3(top[0]), MaxDelayS: max(in.cap, top[0]), Multiplier: 1}
	if jitter && in.maxCeil[0] == 0 {
		// estimated from quantiles: fit the ceilings' line in log space
		// over the attempts below the cap, and take a value within the
		// estimate's error of the round one a policy is written with as
		// that one
		n0 := float64(len(in.delays[0]))
		p.BaseDelayS = snap(round3(fitBase(top[:], in)), roundBases, min(0.15, max(0.05, 1.5/math.Sqrt(n0))))
		p.Multiplier = snap(max(1, math.Round(growth(top[:], in, p.BaseDelayS)*100)/100), roundMultipliers, 0.05)
		p.MaxDelayS = max(snapUp(p.MaxDelayS, roundCaps, 0.03), p.BaseDelayS)
	} else if top[0] > 0 {
		p.Multiplier = max(1, math.Round(growth(top[:], in, top[0])*100)/100)
	}
	if !jitter {
		p.Delay = policy.Exponential
		if p.Multiplier == 1 {
			p.Delay = policy.Fixed
		}
	}
	if p.Validate() != nil {
		return nil, nil
	}
	return p, []string{"delay", "base_delay_s", "max_delay_s", "multiplier"}
}

// The round values policies are written with: bases of 1, 2, 2.5, 3 and
// 5 times a power of ten, multipliers, and caps.
var (
	roundBases       = roundSeries([]float64{1, 2, 2.5, 3, 5}, -3, 3)
	roundMultipliers = []float64{1, 1.5, 2, 2.5, 3, 4, 5, 10}
	roundCaps        = append(roundSeries([]float64{1, 1.5, 2, 2.5, 3, 5, 7.5}, -3, 4), 60, 90, 120, 180, 240, 300, 600, 900, 1200, 1800, 3600)
)

func roundSeries(mantissas []float64, lo, hi int) []float64 {
	var out []float64
	for e := lo; e <= hi; e++ {
		for _, m := range mantissas {
			out = append(out, m*math.Pow(10, float64(e)))
		}
	}
	return out
}

// snap returns the round value nearest x if it lies within the relative
// tolerance tol of it, else x.
func snap(x float64, round []float64, tol float64) float64 {
	best, dist := x, math.Inf(1)
	for _, r := range round {
		if d := math.Abs(x - r); d <= tol*r && d < dist {
			best, dist = r, d
		}
	}
	return best
}

// snapUp returns the least round value at or above x within the relative
// tolerance tol of it, else x: a cap is at least the largest delay seen.
func snapUp(x float64, round []float64, tol float64) float64 {
	best := x
	for _, r := range round {
		if r >= x && r-x <= tol*r && (best == x || r < best) {
			best = r
		}
	}
	return best
}

// decorrelatedCeilings reports whether the records show decorrelated
// jitter: every attempt's ceiling_s is the cap, and the delays drawn at
// attempt 0 lie in [b, 3b] for some b > 0 (the first draw of decorrelated
// jitter; full jitter whose base is its cap draws near 0 too).
func (in *inference) decorrelatedCeilings() bool {
	d0 := in.delays[0]
	if len(d0) < 5 || in.maxCeil[0] == 0 {
		return false
	}
	for k := range in.delays {
		if len(in.delays[k]) > 0 && in.maxCeil[k] != in.cap {
			return false
		}
	}
	lo, hi := slices.Min(d0), slices.Max(d0)
	return lo > 0 && hi <= 3*lo*1.01
}

// decorrelated returns the policy of a log whose records carry the same
// ceiling_s, the cap, at every attempt while the delays vary: decorrelated
// jitter, whose first draw lies in [base, 3 base], so that base is the
// least delay drawn at attempt 0 (snapped to a round value within 10%).
func (in *inference) decorrelated() (*policy.Policy, []string) {
	lo := slices.Min(in.delays[0])
	p := &policy.Policy{Name: "inferred", Delay: policy.Decorrelated, BaseDelayS: snap(round3(lo), roundBases, 0.1), MaxDelayS: in.cap, Multiplier: 1}
	if p.BaseDelayS <= 0 || p.Validate() != nil {
		return nil, nil
	}
	return p, []string{"delay", "base_delay_s", "max_delay_s"}
}

// drawn returns the delays that look drawn at random: without the values
// three or more devices drew exactly, which come from a fixed schedule
// some of the fleet runs beside the jittered one (see resync).
func drawn(ds []float64) []float64 {
	n := map[float64]int{}
	for _, d := range ds {
		n[d]++
	}
	return slices.DeleteFunc(ds, func(d float64) bool { return n[d] >= 3 })
}

// fitBase returns the base the estimated ceilings show: the intercept of
// the weighted least-squares line through log(top[k]) against k over the
// attempts fit (k = 0, and those with at least 5 delays and a ceiling
// below half the cap), each weighted by its number of delays.
func fitBase(top []float64, in *inference) float64 {
	var sw, sx, sy, sxx, sxy float64
	for k := range top {
		n := float64(len(in.delays[k]))
		if top[k] <= 0 || k > 0 && (n < 5 || top[k] >= in.cap/2) {
			continue
		}
		x, y := float64(k), math.Log(top[k])
		sw, sx, sy, sxx, sxy = sw+n, sx+n*x, sy+n*y, sxx+n*x*x, sxy+n*x*y
	}
	if d := sw*sxx - sx*sx; d > 0 {
		return math.Exp((sy*sxx - sx*sxy) / d)
	}
	return top[0]
}

// growth returns the multiplier the ceilings show, from the base: the
// least-squares slope through the origin of log(top[k]/base) against k,
// each attempt weighted by its number of delays, over the attempts k >= 1
// with at least 5 delays and a ceiling below half the cap;
// top[1]/base when there is no such attempt.
func growth(top []float64, in *inference, base float64) float64 {
	var num, den float64
	for k := 1; k < len(top); k++ {
		if n := float64(len(in.delays[k])); n >= 5 && top[k] > 0 && top[k] < in.cap/2 {
			num += n * float64(k) * math.Log(top[k]/base)
			den += n * float64(k*k)
		}
	}
	if den == 0 {
		return top[1] / base
	}
	return math.Exp(num / den)
}

// topQuantile is the quantile of the delays drawn at an attempt that
// estimates its ceiling under jitter: a uniform draw from [0, c] has its
// q-quantile at q·c, estimated from n draws with a relative error of about
// √((1-q)/(q n)), half the median's at q = 0.8, while a minority of up to
// a fifth drawing outside the bounds (what delay-bounds looks for) moves it
// little.
const topQuantile = 0.8

// quantile returns the q-quantile of xs (which it sorts), by linear
// interpolation between order statistics.
func quantile(xs []float64, q float64) float64 {
	slices.Sort(xs)
	pos := q * float64(len(xs)-1)
	i := int(pos)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (pos-float64(i))*(xs[i+1]-xs[i])
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// round3 rounds x to three significant digits.
func round3(x float64) float64 {
	if x <= 0 {
		return x
	}
	p := math.Pow(10, 2-math.Floor(math.Log10(x)))
	return math.Round(x*p) / p
}

// inferRecords is how many records infer reads: the devices it takes
// until it has that many (the dataset's order, by client_id, is no order
// of behaviour, so the first devices are a fair sample of the fleet).
const inferRecords = 1 << 18

// infer reads the first devices of the dataset in dir, up to about
// inferRecords records, to infer its policy.
func infer(dir string) (*Inference, error) {
	var in inference
	n := 0
	_, _, err := devicesUpTo(dir, inferRecords, func(d *Device) error {
		in.add(d)
		if n += len(d.Events); n >= inferRecords {
			return errEnough
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return in.result(), nil
}

// result returns the policy the log shows and what it rests on.
func (in *inference) result() *Inference {
	p, keys := in.policy()
	inf := &Inference{Policy: p, Keys: keys}
	if p != nil {
		inf.Basis = in.basis(p)
	}
	return inf
}

// basis says what the inferred policy p rests on, and so how far it can
// be trusted: how many draws of how many devices, whether the ceilings
// are the clients' own (ceiling_s) or estimated from the draws, and that
// a cap no record carried is only the longest draw seen, a lower bound.
func (in *inference) basis(p *policy.Policy) string {
	s := fmt.Sprintf("from %s of %s", nOf(in.draws, "drawn delay"), nOf(in.devices, "device"))
	switch {
	case p.Delay == policy.Decorrelated:
		s += "; decorrelated jitter, as every record's ceiling_s is the cap; the base is the least first draw"
	case in.maxCeil[0] > 0 && in.maxCeil[1] > 0:
		s += "; the ceilings are those the records carry (ceiling_s)"
	case p.Delay == policy.FullJitter:
		s += fmt.Sprintf("; the delays drawn at one attempt differ, so full jitter is assumed, and each attempt's ceiling is "+
			"estimated from its draws as their %g quantile divided by %g, the base and multiplier rounded within that estimate's error",
			topQuantile, topQuantile)
	default:
		s += "; every device drew the same delay at each attempt: no jitter"
	}
	if !in.capCeil {
		s += fmt.Sprintf("; max_delay_s %s is the longest delay drawn (%s s)", fmtSeconds(p.MaxDelayS), fmtSeconds(in.cap))
		if p.MaxDelayS > in.cap {
			s += " rounded up"
		}
		s += ", so the cap is at least that, not known: declare max_delay_s to judge against the real one"
	}
	return s
}
