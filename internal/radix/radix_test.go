package radix

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// shapes are the inputs the sorts are checked on: sizes on both sides of
// SmallN, keys spread, clustered (times in one hour), few distinct, the
// extremes, and already sorted or reversed.
func shapes() map[string][]int64 {
	r := rand.New(rand.NewPCG(1, 2))
	out := map[string][]int64{"empty": nil, "one": {7}, "extremes": {math.MaxInt64, math.MinInt64, 0, -1, 1, math.MinInt64, math.MaxInt64}}
	for _, n := range []int{SmallN - 1, SmallN, SmallN + 1, 5000, 70000} {
		spread, hour, few, sorted := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		base := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC).UnixNano()
		for i := range n {
			spread[i] = int64(r.Uint64())
			hour[i] = base + r.Int64N(int64(time.Hour))
			few[i] = r.Int64N(5) - 2
			sorted[i] = int64(i) * 1000
		}
		reversed := slices.Clone(sorted)
		slices.Reverse(reversed)
		for name, s := range map[string][]int64{"spread": spread, "hour": hour, "few": few, "sorted": sorted, "reversed": reversed} {
			out[name+"/"+itoa(n)] = s
		}
	}
	return out
}

func itoa(n int) string { return time.Duration(n).String() }

func TestInt64sSameAsSlicesSort(t *testing.T) {
	for name, s := range shapes() {
		got, want := slices.Clone(s), slices.Clone(s)
		Int64s(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: Int64s differs from slices.Sort", name)
		}
	}
	d := []time.Duration{3, -1, 2}
	Int64s(d)
	if !slices.Equal(d, []time.Duration{-1, 2, 3}) {
		t.Errorf("durations: got %v", d)
	}
}

func TestOrderStable(t *testing.T) {
	for name, s := range shapes() {
		ps := Order(len(s), func(i int) int64 { return s[i] })
		want := make([]int, len(s))
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int { return cmp.Compare(s[a], s[b]) })
		if len(ps) != len(want) {
			t.Fatalf("%s: %d pairs for %d keys", name, len(ps), len(want))
		}
		for i, p := range ps {
			if int(p.Index) != want[i] || p.Key != Key(s[want[i]]) {
				t.Errorf("%s: at %d: index %d key %d, want index %d", name, i, p.Index, p.Key, want[i])
				break
			}
		}
		got := Gather(s, ps)
		if !slices.IsSorted(got) {
			t.Errorf("%s: Gather is not sorted", name)
		}
		in := slices.Clone(s)
		Permute(in, ps)
		if !slices.Equal(in, got) {
			t.Errorf("%s: Permute differs from Gather", name)
		}
	}
}

func FuzzInt64s(f *testing.F) {
	f.Add([]byte{1, 2, 3}, uint16(300))
	f.Fuzz(func(t *testing.T, seed []byte, n uint16) {
		s := make([]int64, n)
		for i := range s {
			var v int64
			for j := range 8 {
				if len(seed) > 0 {
					v = v<<8 | int64(seed[(i*8+j)%len(seed)]^byte(i>>j))
				}
			}
			s[i] = v
		}
		got, want := slices.Clone(s), slices.Clone(s)
		Int64s(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("Int64s differs from slices.Sort on %d keys", n)
		}
	})
}

// BenchmarkInt64s sorts a million times within an hour, as a check's
// connects are, against slices.Sort.
func BenchmarkInt64s(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	s := make([]int64, 1_000_000)
	for i := range s {
		s[i] = 1_790_000_000_000_000_000 + r.Int64N(int64(time.Hour))
	}
	work := make([]int64, len(s))
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			copy(work, s)
			Int64s(work)
		}
	})
	b.Run("slices.Sort", func(b *testing.B) {
		for b.Loop() {
			copy(work, s)
			slices.Sort(work)
		}
	})
}

// BenchmarkOrder orders 250,000 40-byte structs by a time, as a check's
// losses are, and gathers them, against slices.SortFunc.
func BenchmarkOrder(b *testing.B) {
	type loss struct {
		At, Back, Served int64
		Dev, A, B, C     int32
	}
	r := rand.New(rand.NewPCG(5, 6))
	s := make([]loss, 250_000)
	for i := range s {
		s[i] = loss{At: 1_790_000_000_000_000_000 + r.Int64N(int64(time.Hour)), Dev: int32(i / 12)}
	}
	work := make([]loss, len(s))
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			copy(work, s)
			_ = Gather(work, Order(len(work), func(i int) int64 { return work[i].At }))
		}
	})
	b.Run("slices.SortFunc", func(b *testing.B) {
		for b.Loop() {
			copy(work, s)
			slices.SortFunc(work, func(a, b loss) int { return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Dev, b.Dev)) })
		}
	})
}
