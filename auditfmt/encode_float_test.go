package auditfmt

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// slowFloat is AppendFloat without the fast path for whole microseconds.
func slowFloat(f float64) string {
	var s string
	if math.Abs(f) < 1e21 {
		s = strconv.FormatFloat(f, 'f', -1, 64)
	} else {
		s = strconv.FormatFloat(f, 'g', -1, 64)
	}
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'N' || c == 'I' {
			return s
		}
	}
	return s + ".0"
}

// TestAppendFloatMicros checks the fast path against strconv: whole
// microseconds across the range it takes, their neighbours, and values
// around its edges.
func TestAppendFloatMicros(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	fs := []float64{0, math.Copysign(0, -1), 1e-6, 0.1, 0.25, 1, 5, 120, 999999999.999999, 1e9, 1e9 - 1e-6, -1e-6, -5,
		math.NaN(), math.Inf(1), math.Inf(-1), 0.1 + 0.2, 1e-7, 123456.0000005, math.SmallestNonzeroFloat64}
	for range 300000 {
		k := rng.Int64N(1e15)
		if rng.IntN(2) == 0 {
			k = rng.Int64N(1e9)
		}
		f := float64(k) / 1e6
		fs = append(fs, f, math.Nextafter(f, 0), math.Nextafter(f, 2e9), rng.Float64()*math.Pow(10, float64(rng.IntN(12)-3)))
	}
	for _, f := range fs {
		if got, want := string(AppendFloat(nil, f)), slowFloat(f); got != want {
			t.Fatalf("AppendFloat(%v) = %s, want %s", f, got, want)
		}
	}
}
