package simulate

import (
	"math/bits"
	"slices"
)

// The queue holds events: devices (see device) with their next step due
// at t, and the broker (who == 0) with its next transition. Events are
// ordered by (t, who), so the broker goes first at any instant.
func (a *device) before(b *device) bool {
	return a.t < b.t || a.t == b.t && a.who < b.who
}

// queue is a radix heap of events on their times: a monotone priority
// queue, in which no event pushed may be due before the last one popped.
// The model guarantees it: time only moves forward, and an event queues
// steps at its own instant or later.
//
// Bucket k (1..64) holds the events whose time differs from the current
// one, now, first in bit k-1; cur holds the events due now, and is popped
// in order of who. When cur runs out, the lowest non-empty bucket is split
// around its earliest time, which becomes now. Events due at one instant
// usually arrive in order of who (the model takes them in that order and
// they keep it), so sorting cur is mostly a check. Each device and the
// broker have at most one event queued, so the order is total.
//
// Buckets are chains of fixed blocks from a shared free list, so that a
// bucket that fills and empties again neither copies its events to grow
// nor keeps the memory of its largest size.
type queue struct {
	now     int64
	n       int
	cur     []device
	head    int  // the events due now are cur[head:]
	sorted  bool // whether they are in order of who
	buckets [65]bucket
	free    []*block
}

const blockLen = 1024

type block [blockLen]device

// bucket is a chain of blocks, all full but the last, holding n events.
type bucket struct {
	blocks []*block
	n      int
}

func (q *queue) len() int { return q.n }

func (q *queue) push(e device) {
	q.n++
	k := bits.Len64(uint64(e.t ^ q.now))
	if k == 0 {
		if len(q.cur) > q.head && q.cur[len(q.cur)-1].who > e.who {
			q.sorted = false
		}
		q.cur = append(q.cur, e)
		return
	}
	q.add(&q.buckets[k], e)
}

func (q *queue) add(b *bucket, e device) {
	i := b.n % blockLen
	if i == 0 {
		var blk *block
		if n := len(q.free); n > 0 {
			blk, q.free = q.free[n-1], q.free[:n-1]
		} else {
			blk = new(block)
		}
		b.blocks = append(b.blocks, blk)
	}
	b.blocks[len(b.blocks)-1][i] = e
	b.n++
}

// pop removes and returns the first event; the queue must not be empty.
func (q *queue) pop() device {
	if q.head == len(q.cur) {
		q.cur, q.head, q.sorted = q.cur[:0], 0, false
		q.split()
	}
	if !q.sorted {
		if b := q.cur[q.head:]; !slices.IsSortedFunc(b, byWho) {
			slices.SortFunc(b, byWho)
		}
		q.sorted = true
	}
	e := q.cur[q.head]
	q.head++
	q.n--
	return e
}

// split makes the earliest time of the lowest non-empty bucket now, and
// spreads that bucket's events over cur and the buckets below it.
func (q *queue) split() {
	i := 1
	for q.buckets[i].n == 0 {
		i++
	}
	b := &q.buckets[i]
	q.now = b.blocks[0][0].t
	b.each(func(e *device) { q.now = min(q.now, e.t) })
	b.each(func(e *device) {
		if e.t == q.now {
			q.cur = append(q.cur, *e)
		} else {
			q.add(&q.buckets[bits.Len64(uint64(e.t^q.now))], *e)
		}
	})
	q.free = append(q.free, b.blocks...)
	clear(b.blocks)
	b.blocks, b.n = b.blocks[:0], 0
}

// each calls f with each event of b, in the order they were added.
func (b *bucket) each(f func(e *device)) {
	for j, blk := range b.blocks {
		n := blockLen
		if j == len(b.blocks)-1 {
			n = b.n - j*blockLen
		}
		for k := range n {
			f(&blk[k])
		}
	}
}

func byWho(a, b device) int {
	switch {
	case a.who < b.who:
		return -1
	case a.who > b.who:
		return 1
	}
	return 0
}
