package policy

import "math"

// Ceiling returns the upper bound of the delay drawn at attempt, the
// 0-based attempt counter (a negative attempt counts as 0): ceiling(a) for
// exponential, full_jitter and equal_jitter, base_delay_s for fixed,
// max_delay_s for decorrelated_jitter, and 0 for none. For a valid policy
// it is finite and >= 0 for every attempt.
func (p *Policy) Ceiling(attempt int64) float64 {
	switch p.Delay {
	case Fixed:
		return p.BaseDelayS
	case Exponential, FullJitter, EqualJitter:
		return p.ceiling(attempt)
	case Decorrelated:
		return p.MaxDelayS
	}
	return 0
}

// ceiling is min(max_delay_s, base_delay_s * multiplier^e) with e = a, or
// with immediate_first_retry e = a-1 for a >= 1 and 0 at a = 0.
func (p *Policy) ceiling(a int64) float64 {
	a = max(a, 0)
	if p.ImmediateFirstRetry {
		if a == 0 {
			return 0
		}
		a--
	}
	return grow(p.BaseDelayS, p.MaxDelayS, p.Multiplier, a)
}

// grow returns min(c, b * m^e) for 0 <= b <= c and m >= 1 (m == 1 keeps b)
// without overflow: it clamps e, before multiplying, to one more than the
// exponent at which b * m^e reaches c, so the power is at most about
// c * m^2, and an overflow to +Inf there is taken by the min.
func grow(b, c, m float64, e int64) float64 {
	switch {
	case b >= c:
		return c
	case b <= 0 || m <= 1:
		return b
	}
	reach := math.Ceil(math.Log(c/b) / math.Log(m)) // +Inf when c/b or the quotient overflows
	x := math.Min(float64(e), reach+1)
	return math.Min(c, b*math.Pow(m, x))
}

// Bounds returns the interval [lo, hi] that every Draw(attempt, prev, u)
// lies in, for the delay-bounds rule of the analyzers. lo == hi for the
// rules without jitter.
func (p *Policy) Bounds(attempt int64, prev float64) (lo, hi float64) {
	switch p.Delay {
	case Fixed:
		return p.BaseDelayS, p.BaseDelayS
	case Exponential:
		c := p.ceiling(attempt)
		return c, c
	case FullJitter:
		c := p.ceiling(attempt)
		return math.Min(p.MinDelayS, c), c
	case EqualJitter:
		c := p.ceiling(attempt)
		return c / 2, c
	case Decorrelated:
		return math.Min(p.BaseDelayS, p.MaxDelayS), math.Min(p.MaxDelayS, p.decorrelatedTop(prev))
	}
	return 0, 0
}

// Draw returns the delay before attempt, given prev, the delay this device
// drew before (0 if none), and u, a number drawn uniformly from [0, 1) by
// the caller. It is a pure function. For a valid policy the result is
// finite and within Bounds(attempt, prev).
func (p *Policy) Draw(attempt int64, prev, u float64) float64 {
	lo, hi := p.Bounds(attempt, prev)
	switch p.Delay {
	case FullJitter, EqualJitter:
		return lerp(lo, hi, u)
	case Decorrelated:
		return math.Min(p.MaxDelayS, lerp(p.BaseDelayS, p.decorrelatedTop(prev), u))
	}
	return hi // lo == hi
}

// decorrelatedTop is the top of a decorrelated_jitter draw before the
// cap: max(base, 3p) with p = prev if prev > 0, else base. It may be +Inf
// for a huge prev.
func (p *Policy) decorrelatedTop(prev float64) float64 {
	last := p.BaseDelayS
	if prev > 0 {
		last = prev
	}
	return math.Max(p.BaseDelayS, 3*last)
}

// lerp returns lo + u*(hi-lo), and lo for u <= 0 or NaN, never more than
// hi (rounding), and hi for an infinite hi when u > 0.
func lerp(lo, hi, u float64) float64 {
	if !(u > 0) || hi <= lo {
		return lo
	}
	return math.Min(hi, lo+u*(hi-lo))
}
