package ordered

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestRunKeepsOrder gives items uneven amounts of work so that they finish
// out of order, and checks that they arrive in order, each worked once.
func TestRunKeepsOrder(t *testing.T) {
	for _, n := range []int{0, 1, 3, 8} {
		in := make(chan *[2]int)
		out := make(chan *[2]int)
		go func() {
			for i := range 500 {
				in <- &[2]int{i, 0}
			}
			close(in)
		}()
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		pause := make([]time.Duration, 500)
		for i := range pause {
			pause[i] = time.Duration(rng.IntN(50)) * time.Microsecond
		}
		go Run(n, in, out, func(w int, it *[2]int) {
			if w < 0 || w >= max(n, 1) {
				t.Errorf("worker index %d out of [0, %d)", w, max(n, 1))
			}
			time.Sleep(pause[it[0]])
			it[1]++
		})
		next := 0
		for it := range out {
			if it[0] != next || it[1] != 1 {
				t.Fatalf("n=%d: got item %d worked %d times, want item %d worked once", n, it[0], it[1], next)
			}
			next++
		}
		if next != 500 {
			t.Fatalf("n=%d: got %d items, want 500", n, next)
		}
	}
}
