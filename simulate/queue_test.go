package simulate

import (
	"math/rand/v2"
	"testing"
)

// TestQueueOrder drives the queue as the model does (each event popped
// queues a later one, or one at the same instant for a later device) and
// checks that events come out in (t, who) order, against a sorted slice.
func TestQueueOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q queue
	var pending []device
	for who := range uint32(1000) {
		e := device{t: rng.Int64N(1000), who: who}
		q.push(e)
		pending = append(pending, e)
	}
	var prev device
	for range 200000 {
		k := 0
		for i := range pending {
			if pending[i].before(&pending[k]) {
				k = i
			}
		}
		want := pending[k]
		got := q.pop()
		if got.t != want.t || got.who != want.who || got.before(&prev) {
			t.Fatalf("popped (%d, %d) after (%d, %d), want (%d, %d)", got.t, got.who, prev.t, prev.who, want.t, want.who)
		}
		prev = got
		next := device{t: got.t + rng.Int64N(3)*rng.Int64N(1<<uint(rng.IntN(40))), who: got.who}
		pending[k] = next
		q.push(next)
	}
	if q.len() != 1000 {
		t.Fatalf("len %d, want 1000", q.len())
	}
}
