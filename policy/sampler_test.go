package policy

import (
	"math/rand/v2"
	"testing"
)

// TestSamplerAgreesWithDraw checks that a Sampler draws what Draw draws,
// for every preset and rule, inside and beyond the attempts it keeps.
func TestSamplerAgreesWithDraw(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ps []Policy
	for _, name := range PresetNames() {
		p, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	for _, r := range []Rule{None, EqualJitter, Decorrelated} {
		ps = append(ps, Policy{Delay: r, BaseDelayS: 0.5, MaxDelayS: 90, Multiplier: 3})
	}
	for _, p := range ps {
		s := p.Sampler()
		for a := int64(-2); a < 3*sampledAttempts; a++ {
			for range 20 {
				u, prev := rng.Float64(), rng.Float64()*100
				if got, want := s.Draw(a, prev, u), p.Draw(a, prev, u); got != want {
					t.Fatalf("%s (%s): Sampler.Draw(%d, %v, %v) = %v, Draw = %v", p.Name, p.Delay, a, prev, u, got, want)
				}
			}
			prev := rng.Float64() * 100
			glo, ghi := s.Bounds(a, prev)
			if wlo, whi := p.Bounds(a, prev); glo != wlo || ghi != whi {
				t.Fatalf("%s (%s): Sampler.Bounds(%d, %v) = [%v, %v], Bounds = [%v, %v]", p.Name, p.Delay, a, prev, glo, ghi, wlo, whi)
			}
			if got, want := s.Ceiling(a), p.Ceiling(a); got != want {
				t.Fatalf("%s (%s): Sampler.Ceiling(%d) = %v, Ceiling = %v", p.Name, p.Delay, a, got, want)
			}
		}
	}
}
