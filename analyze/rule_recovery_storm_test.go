package analyze

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
)

// TestExpectedPeakOrderFree gives expectedPeak the same losses in many
// orders and requires the same figures to the bit: the density is summed
// in fixed point, as a sum of parts merged in any order must be. It also
// requires a density that sums to a whole fraction to be said exactly: 8
// devices drawing uniformly over 64 s put 0.125 in every second.
func TestExpectedPeakOrderFree(t *testing.T) {
	p, err := policy.Preset("full-jitter")
	if err != nil {
		t.Fatal(err)
	}
	back := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC).UnixNano()
	rng := rand.New(rand.NewPCG(7, 37))
	var ls []stormLoss
	for i := range 3000 {
		start := back - int64(rng.IntN(int(2*time.Minute)))
		ls = append(ls, stormLoss{LossAt: start - int64(time.Second), Conn: NoTime, Dev: int32(i), Start: start,
			Number: int64(rng.IntN(7)), Delay: rng.Float64() * 60, Prev: rng.Float64() * 30, HasAttempt: true})
	}
	peak := func(p *policy.Policy, ls []stormLoss) (float64, int64, int) {
		sp := reduceStorm(p, ls, back, true)
		return sp.expectedPeak(back)
	}
	want, wantAt, wantN := peak(&p, ls)
	if want <= 0 {
		t.Fatalf("expected peak %v: want some connects expected", want)
	}
	for round := range 20 {
		rng.Shuffle(len(ls), func(i, j int) { ls[i], ls[j] = ls[j], ls[i] })
		got, at, n := peak(&p, ls)
		if got != want || at != wantAt || n != wantN {
			t.Fatalf("order %d: expected peak %v at %d over %d windows, want %v at %d over %d", round, got, at, n, want, wantAt, wantN)
		}
	}
	// 8 devices drawing their first attempt over [back, back+64 s]
	wide := p
	wide.BaseDelayS = 64
	var spread []stormLoss
	for i := range 8 {
		spread = append(spread, stormLoss{LossAt: back - int64(time.Second), Conn: NoTime, Dev: int32(i), Start: back,
			Number: 0, Delay: 64, HasAttempt: true, Connected: false})
	}
	if lo, hi := pendingWindow(&wide, &spread[0], back); lo != back || hi != back+int64(64*time.Second) {
		t.Fatalf("the draw's window [%d, %d], want [%d, %d]", lo-back, hi-back, 0, int64(64*time.Second))
	}
	if got, _, _ := peak(&wide, spread); got != 0.125 {
		t.Errorf("8 devices over 64 s: expected peak %v per second, want 0.125", got)
	}
}

// TestMoveKeepsNoRecovery: a loss that never recovered, of a device whose
// clock was off, is moved onto the fleet's clock without its missing
// connect becoming one (NoTime less an offset wrapped to a time far
// away, and counted as a recovery).
func TestMoveKeepsNoRecovery(t *testing.T) {
	back := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC).UnixNano()
	for _, o := range []int64{int64(4 * time.Second), -int64(4 * time.Second)} {
		ls := []stormLoss{
			{LossAt: back - int64(time.Second), Conn: back + int64(time.Second), Dev: 0},
			{LossAt: back - int64(time.Second), Conn: NoTime, Dev: 1},
		}
		for i := range ls {
			ls[i].move(o)
		}
		if ls[1].Conn != NoTime || ls[0].Conn != back+int64(time.Second)-o {
			t.Fatalf("offset %v: connects %d and %d after the move", time.Duration(o), ls[0].Conn, ls[1].Conn)
		}
		p, err := policy.Preset("full-jitter")
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := judgeStorm(&p, ls, back); s.devices != 1 {
			t.Errorf("offset %v: %d recoveries, want 1", time.Duration(o), s.devices)
		}
	}
}
