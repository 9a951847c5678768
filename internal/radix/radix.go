// Package radix sorts by 64-bit keys in time linear in their number: a
// least-significant-digit radix sort, 11 bits a pass, that skips every
// digit all the keys share (times within an hour of each other differ in
// their low 42 bits, so four passes, where a comparison sort makes about
// log2(n) of them). It is what the finishing step of a check sorts times
// with: the same order as slices.Sort and a stable slices.SortFunc on the
// key, at two fifths of slices.Sort's cost on a million int64s
// (BenchmarkInt64s) and a fifth of slices.SortFunc's on 250,000 structs
// (BenchmarkOrder).
//
// Below SmallN keys it defers to slices.Sort, which is faster there.
package radix

import (
	"cmp"
	"math"
	"slices"
)

// SmallN is the number of keys below which a comparison sort is faster.
const SmallN = 256

const (
	bits    = 11
	buckets = 1 << bits
	mask    = buckets - 1
	digits  = (64 + bits - 1) / bits
)

// Int64s sorts s in increasing order.
func Int64s[S ~[]E, E ~int64](s S) {
	if len(s) < SmallN {
		slices.Sort(s)
		return
	}
	u := make([]uint64, len(s))
	for i, v := range s {
		u[i] = uint64(v) ^ 1<<63 // order-preserving: the sign bit flipped
	}
	tmp := make([]uint64, len(s))
	if sortKeys(u, tmp) {
		u = tmp
	}
	for i, v := range u {
		s[i] = E(int64(v ^ 1<<63))
	}
}

// Pair is a key and the index of what it is the key of.
type Pair struct {
	Key   uint64
	Index uint32
}

// Key returns an int64's key: unsigned, in the same order.
func Key(v int64) uint64 { return uint64(v) ^ 1<<63 }

// Order returns the indices 0..n-1 in the order of their keys (key(i)
// for index i), stably: indices with equal keys stay in increasing
// order. It sorts n 16-byte pairs, not the n things they index, so a
// caller sorting large structs gathers them once, in the order given.
// n is at most 2^32-1 (a Pair's Index is 32 bits).
func Order(n int, key func(i int) int64) []Pair {
	if uint64(n) > math.MaxUint32 {
		panic("radix.Order: more than 2^32-1 keys") // Pair.Index would wrap
	}
	ps := make([]Pair, n)
	for i := range ps {
		ps[i] = Pair{Key: Key(key(i)), Index: uint32(i)}
	}
	if n < SmallN {
		slices.SortStableFunc(ps, func(a, b Pair) int { return cmp.Compare(a.Key, b.Key) })
		return ps
	}
	tmp := make([]Pair, n)
	if sortPairs(ps, tmp) {
		return tmp
	}
	return ps
}

// Permute puts s's elements in the order ps gives (s[i] becomes what
// was s[ps[i].Index]), in place, following each cycle of the
// permutation once: no second slice of s's elements. It uses up ps.
func Permute[T any](s []T, ps []Pair) {
	const done = ^uint32(0)
	for i := range ps {
		if ps[i].Index == done {
			continue
		}
		held, j := s[i], i
		for {
			k := ps[j].Index
			ps[j].Index = done
			if int(k) == i {
				s[j] = held
				break
			}
			s[j], j = s[k], int(k)
		}
	}
}

// Gather returns s's elements in the order ps gives, in a new slice.
func Gather[T any](s []T, ps []Pair) []T {
	out := make([]T, len(ps))
	for i, p := range ps {
		out[i] = s[p.Index]
	}
	return out
}

// sortKeys sorts a stably, using tmp (as long as a) as the other buffer
// of each pass; it reports whether the result is in tmp. sortPairs is
// the same by Pair.Key: two copies, as a key function called per element
// and pass cost half the gain.
func sortKeys(a, tmp []uint64) bool {
	var counts [digits][buckets]uint32
	lo, hi := ^uint64(0), uint64(0)
	for _, k := range a {
		lo, hi = min(lo, k), max(hi, k)
		for d := range digits {
			counts[d][k>>(d*bits)&mask]++
		}
	}
	swapped := false
	for d := range passes(&counts, lo, hi, len(a)) {
		c, shift := &counts[d], uint(d*bits)
		for _, k := range a {
			b := k >> shift & mask
			tmp[c[b]] = k
			c[b]++
		}
		a, tmp = tmp, a
		swapped = !swapped
	}
	return swapped
}

func sortPairs(a, tmp []Pair) bool {
	var counts [digits][buckets]uint32
	lo, hi := ^uint64(0), uint64(0)
	for _, p := range a {
		k := p.Key
		lo, hi = min(lo, k), max(hi, k)
		for d := range digits {
			counts[d][k>>(d*bits)&mask]++
		}
	}
	swapped := false
	for d := range passes(&counts, lo, hi, len(a)) {
		c, shift := &counts[d], uint(d*bits)
		for _, p := range a {
			b := p.Key >> shift & mask
			tmp[c[b]] = p
			c[b]++
		}
		a, tmp = tmp, a
		swapped = !swapped
	}
	return swapped
}

// passes returns the digits a pass is needed for, lowest first, and
// turns each one's counts into the offsets its pass places keys at:
// not those that every key of lo..hi (n keys) has in common.
func passes(counts *[digits][buckets]uint32, lo, hi uint64, n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for d := range digits {
			if (lo^hi)>>(d*bits) == 0 {
				return // every key has this digit and those above it in common
			}
			c := &counts[d]
			if c[lo>>(d*bits)&mask] == uint32(n) {
				continue // every key has this digit in common
			}
			var sum uint32
			for i := range c {
				c[i], sum = sum, sum+c[i]
			}
			if !yield(d) {
				return
			}
		}
	}
}
