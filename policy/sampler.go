package policy

// sampledAttempts is how many attempts a Sampler keeps the bounds of.
const sampledAttempts = 64

// Sampler draws delays as [Policy.Draw] does, with the bounds of the first
// attempts computed once: a simulator draws millions of delays from one
// policy, and each Draw computes a logarithm and a power.
type Sampler struct {
	p      Policy
	lo, hi [sampledAttempts]float64
}

// Sampler returns a Sampler of p, which must be valid. Later changes to p
// do not reach it.
func (p *Policy) Sampler() *Sampler {
	s := &Sampler{p: *p}
	for a := range int64(sampledAttempts) {
		s.lo[a], s.hi[a] = p.Bounds(a, 0)
	}
	return s
}

// Draw returns p.Draw(attempt, prev, u).
func (s *Sampler) Draw(attempt int64, prev, u float64) float64 {
	switch s.p.Delay {
	case FullJitter, EqualJitter:
		if attempt >= 0 && attempt < sampledAttempts {
			return lerp(s.lo[attempt], s.hi[attempt], u)
		}
	case Fixed, Exponential:
		if attempt >= 0 && attempt < sampledAttempts {
			return s.hi[attempt]
		}
	}
	return s.p.Draw(attempt, prev, u)
}

// Ceiling returns p.Ceiling(attempt).
func (s *Sampler) Ceiling(attempt int64) float64 {
	if s.p.Delay != Decorrelated && attempt >= 0 && attempt < sampledAttempts {
		return s.hi[attempt]
	}
	return s.p.Ceiling(attempt)
}

// Bounds returns p.Bounds(attempt, prev).
func (s *Sampler) Bounds(attempt int64, prev float64) (lo, hi float64) {
	if s.p.Delay != Decorrelated && attempt >= 0 && attempt < sampledAttempts {
		return s.lo[attempt], s.hi[attempt]
	}
	return s.p.Bounds(attempt, prev)
}
