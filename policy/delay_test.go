package policy

import (
	"math"
	"testing"
)

func TestCeiling(t *testing.T) {
	exp := Policy{Delay: Exponential, BaseDelayS: 1, MaxDelayS: 120, Multiplier: 2}
	immediate := exp
	immediate.ImmediateFirstRetry = true
	constant := exp
	constant.Multiplier = 1
	zeroBase := exp
	zeroBase.BaseDelayS = 0
	tests := []struct {
		name    string
		p       Policy
		attempt int64
		want    float64
	}{
		{"exponential 0", exp, 0, 1},
		{"exponential 3", exp, 3, 8},
		{"exponential capped", exp, 7, 120},
		{"exponential huge attempt", exp, math.MaxInt64, 120},
		{"negative attempt counts as 0", exp, -5, 1},
		{"most negative attempt", exp, math.MinInt64, 1},
		{"immediate 0", immediate, 0, 0},
		{"immediate 1", immediate, 1, 1},
		{"immediate 4", immediate, 4, 8},
		{"immediate huge", immediate, math.MaxInt64, 120},
		{"immediate negative", immediate, -1, 0},
		{"multiplier 1", constant, 1000, 1},
		{"base 0", zeroBase, 1000, 0},
		{"fixed", Policy{Delay: Fixed, BaseDelayS: 5}, 9, 5},
		{"none", Policy{Delay: None}, 9, 0},
		{"decorrelated", Policy{Delay: Decorrelated, BaseDelayS: 1, MaxDelayS: 60}, 0, 60},
		{"full_jitter", Policy{Delay: FullJitter, BaseDelayS: 10, MaxDelayS: 600, Multiplier: 1.5}, 2, 22.5},
		{"unknown rule", Policy{Delay: "linear", BaseDelayS: 1}, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Ceiling(tt.attempt); got != tt.want {
				t.Errorf("Ceiling(%d) = %v, want %v", tt.attempt, got, tt.want)
			}
		})
	}
}

// TestCeilingExtremes pins the exponent clamp: parameters at the edges of
// float64 give a finite ceiling, never NaN or +Inf, at every attempt.
func TestCeilingExtremes(t *testing.T) {
	params := []struct{ base, cap, m float64 }{
		{math.SmallestNonzeroFloat64, math.MaxFloat64, math.MaxFloat64},
		{math.SmallestNonzeroFloat64, math.MaxFloat64, 1 + 1e-15},
		{1e-300, 1e300, 1e300},
		{1, math.MaxFloat64, 2},
		{math.MaxFloat64 / 2, math.MaxFloat64, 3},
	}
	for _, pr := range params {
		p := Policy{Delay: Exponential, BaseDelayS: pr.base, MaxDelayS: pr.cap, Multiplier: pr.m}
		if err := p.Validate(); err != nil {
			t.Fatalf("%+v: %v", pr, err)
		}
		for _, a := range []int64{0, 1, 2, 63, 64, 1024, 1 << 40, math.MaxInt64 - 1, math.MaxInt64} {
			c := p.Ceiling(a)
			if math.IsNaN(c) || math.IsInf(c, 0) || c < 0 || c > pr.cap {
				t.Errorf("%+v: Ceiling(%d) = %v", pr, a, c)
			}
		}
		if c := p.Ceiling(math.MaxInt64); pr.m > 1 && pr.base > 0 && c != pr.cap {
			t.Errorf("%+v: Ceiling(MaxInt64) = %v, want the cap", pr, c)
		}
	}
}

func TestDraw(t *testing.T) {
	fj := Policy{Delay: FullJitter, BaseDelayS: 1, MaxDelayS: 120, Multiplier: 2}
	auto := Policy{Delay: FullJitter, MinDelayS: 5, BaseDelayS: 10, MaxDelayS: 600, Multiplier: 1.5}
	lowCap := auto
	lowCap.MaxDelayS, lowCap.MinDelayS, lowCap.BaseDelayS = 4, 5, 1 // invalid (min > cap) but Draw stays in bounds
	eq := Policy{Delay: EqualJitter, BaseDelayS: 1, MaxDelayS: 120, Multiplier: 2}
	dec := Policy{Delay: Decorrelated, BaseDelayS: 1, MaxDelayS: 20}
	tests := []struct {
		name         string
		p            Policy
		attempt      int64
		prev, u      float64
		want, lo, hi float64
	}{
		{"none", Policy{Delay: None}, 4, 0, 0.5, 0, 0, 0},
		{"fixed", Policy{Delay: Fixed, BaseDelayS: 5}, 4, 3, 0.9, 5, 5, 5},
		{"exponential", Policy{Delay: Exponential, BaseDelayS: 1, MaxDelayS: 120, Multiplier: 2}, 4, 0, 0.9, 16, 16, 16},
		{"full_jitter u=0", fj, 3, 0, 0, 0, 0, 8},
		{"full_jitter u=0.5", fj, 3, 0, 0.5, 4, 0, 8},
		{"full_jitter capped", fj, 20, 0, 0.25, 30, 0, 120},
		{"full_jitter min_delay", auto, 1, 0, 0.5, 10, 5, 15},
		{"full_jitter min_delay above the ceiling", lowCap, 0, 0, 0.5, 1, 1, 1},
		{"equal_jitter", eq, 3, 0, 0.5, 6, 4, 8},
		{"decorrelated first", dec, 0, 0, 0.5, 2, 1, 3},
		{"decorrelated prev", dec, 5, 4, 0.5, 6.5, 1, 12},
		{"decorrelated capped", dec, 5, 10, 0.9, 20, 1, 20},
		{"decorrelated prev below base/3", dec, 5, 0.1, 0.5, 1, 1, 1},
		{"decorrelated huge prev", dec, 5, math.MaxFloat64, 0, 1, 1, 20},
		{"decorrelated huge prev u>0", dec, 5, math.MaxFloat64, 0.1, 20, 1, 20},
		{"decorrelated NaN prev", dec, 5, math.NaN(), 0.5, 2, 1, 3},
		{"NaN u draws lo", fj, 3, 0, math.NaN(), 0, 0, 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Draw(tt.attempt, tt.prev, tt.u); got != tt.want {
				t.Errorf("Draw(%d, %v, %v) = %v, want %v", tt.attempt, tt.prev, tt.u, got, tt.want)
			}
			if lo, hi := tt.p.Bounds(tt.attempt, tt.prev); lo != tt.lo || hi != tt.hi {
				t.Errorf("Bounds(%d, %v) = [%v, %v], want [%v, %v]", tt.attempt, tt.prev, lo, hi, tt.lo, tt.hi)
			}
		})
	}
}

// TestDrawNeverAboveHi pins the clamp against rounding: lo + u*(hi-lo)
// with u just below 1 can round above hi.
func TestDrawNeverAboveHi(t *testing.T) {
	u := math.Nextafter(1, 0)
	for _, minDelay := range []float64{0, 0.1, 0.3, 1.0 / 3, 5} {
		p := Policy{Delay: FullJitter, MinDelayS: minDelay, BaseDelayS: 0.7, MaxDelayS: 1e6, Multiplier: 1.1}
		for a := range int64(200) {
			lo, hi := p.Bounds(a, 0)
			if d := p.Draw(a, 0, u); d < lo || d > hi {
				t.Fatalf("min %v attempt %d: Draw = %v, outside [%v, %v]", minDelay, a, d, lo, hi)
			}
		}
	}
}
