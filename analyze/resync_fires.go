package analyze

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// The timer fires of resync are the largest state a partial holds, one
// per retry; a group needs at least the rule's group threshold of fires
// with the same delay at the same attempt number, and a jittered fleet's
// delays are almost all distinct. So a distributed driver need not ship
// them all to the one place that finishes: Partial.TakeFires takes them
// out of each partial in shards by attempt number and delay; the driver
// gathers each shard from every part (in parallel, a shard at a time);
// Split.KeepFires keeps only the fires whose delay enough fires share;
// Split.Finish takes what is kept beside the partials and restores the
// order the fires had. The result is the one Check gives: the fires
// dropped could not have been in a group.

// shardFire is a fire as it travels in a shard: with its part, attempt
// number and place among its part's fires of that attempt number.
type shardFire struct {
	part, attempt, seq int
	f                  fire
}

// fireShard returns the shard of n that the fires of attempt a with
// delay d go to (0 and -0 are one delay).
func fireShard(a int, d float64, n int) int {
	if d == 0 {
		d = 0
	}
	h := (math.Float64bits(d) ^ uint64(a)<<56) * 0x9E3779B97F4A7C15
	return int((h >> 32) % uint64(n))
}

// TakeFires removes resync's timer fires from the partial and returns
// them in at most shards shards (>= 1), encoded, by shard number; every
// part must take them in as many shards (KeepFires refuses a shard whose
// parts do not). A partial whose fires were taken needs them back,
// through KeepFires, in its Split's Finish. Nil if resync does not run.
func (p *Partial) TakeFires(shards int) map[int][]byte {
	r := p.resync()
	if r == nil {
		return nil
	}
	shards = max(shards, 1)
	out := map[int][]byte{}
	for a := range r.Fires {
		for seq, f := range r.Fires[a] {
			k := fireShard(a, f.Delay, shards)
			if out[k] == nil {
				out[k] = binary.AppendUvarint(nil, uint64(shards))
			}
			out[k] = appendFire(out[k], shardFire{p.part, a, seq, f})
		}
		r.Fires[a] = nil
	}
	p.firesTaken = true
	return out
}

// resync returns the partial's resync rule, nil if it does not run.
func (p *Partial) resync() *resync { return p.k.resync() }

// resync returns the checker's resync rule, nil if it does not run.
func (k *checker) resync() *resync { return ruleOf[*resync](k) }

// ruleOf returns the check's rule of type R, the zero R (nil) if it does
// not run.
func ruleOf[R Rule](k *checker) R {
	for _, r := range k.rules {
		if x, ok := r.(R); ok {
			return x
		}
	}
	var none R
	return none
}

// KeepFires returns the fires of one shard, gathered from every part
// (each part's encoding of it, in any order), whose attempt number and
// delay at least resync's group threshold of fires share, encoded: nil
// if none.
func (s *Split) KeepFires(shard [][]byte) ([]byte, error) {
	group := resyncGroup
	if rs := s.k.resync(); rs != nil {
		group = rs.group
	}
	type key struct {
		attempt int
		delay   float64
	}
	n := map[key]int{}
	var all []shardFire
	shards := 0
	for _, b := range shard {
		k, fs, err := readFires(b)
		if err != nil {
			return nil, err
		}
		if shards != 0 && k != shards {
			return nil, fmt.Errorf("resync fires: a shard of %d and one of %d: every part must take its fires in as many shards", shards, k)
		}
		shards = k
		for _, f := range fs {
			n[key{f.attempt, f.f.Delay}]++
		}
		all = append(all, fs...)
	}
	var out []byte
	for _, f := range all {
		if n[key{f.attempt, f.f.Delay}] >= group {
			if out == nil {
				out = binary.AppendUvarint(nil, uint64(shards))
			}
			out = appendFire(out, f)
		}
	}
	return out, nil
}

// keptFires reads the fires KeepFires kept, checks that each names a
// part and one of its devices (counts[i]: the devices of part i), and
// returns them in the order they had: by attempt number, part and place.
func keptFires(kept [][]byte, counts []int32) ([]shardFire, error) {
	var fs []shardFire
	for _, b := range kept {
		if len(b) == 0 {
			continue // a shard KeepFires kept nothing of
		}
		_, f, err := readFires(b)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f...)
	}
	for _, f := range fs {
		if f.part < 0 || f.part >= len(counts) || f.f.Dev < 0 || f.f.Dev >= counts[f.part] {
			return nil, fmt.Errorf("resync fires: a fire of device %d of part %d: expected parts 0 to %d and a device they read", f.f.Dev, f.part, len(counts)-1)
		}
	}
	slices.SortFunc(fs, func(x, y shardFire) int {
		return cmp.Or(cmp.Compare(x.attempt, y.attempt), cmp.Compare(x.part, y.part), cmp.Compare(x.seq, y.seq))
	})
	return fs, nil
}

// restoreFires puts the fires keptFires returned back into the merged
// resync rule r, their devices numbered as the merge numbered them: part
// i's from the sum of counts before it.
func restoreFires(r *resync, fs []shardFire, counts []int32) {
	base := make([]int32, len(counts))
	for i := 1; i < len(counts); i++ {
		base[i] = base[i-1] + counts[i-1]
	}
	for _, f := range fs {
		f.f.Dev += base[f.part]
		r.Fires[f.attempt] = append(r.Fires[f.attempt], f.f)
	}
}

// valid checks that every fire names a device the rule saw: Finish
// indexes by them.
func (r *resync) valid() error {
	for a := range r.Fires {
		for _, f := range r.Fires[a] {
			if f.Dev < 0 || f.Dev >= r.Devices {
				return fmt.Errorf("resync: a fire of device %d of %d", f.Dev, r.Devices)
			}
		}
	}
	return nil
}

// appendFire appends f in varints (the delay as its 8 bytes).
func appendFire(b []byte, f shardFire) []byte {
	b = binary.AppendUvarint(b, uint64(f.part))
	b = append(b, byte(f.attempt))
	b = binary.AppendUvarint(b, uint64(f.seq))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f.f.Delay))
	b = binary.AppendVarint(b, f.f.At)
	b = binary.AppendUvarint(b, uint64(f.f.Dev))
	b = binary.AppendVarint(b, int64(f.f.Ref.File))
	b = binary.AppendVarint(b, int64(f.f.Ref.Source))
	b = binary.AppendVarint(b, f.f.Ref.Row)
	return binary.AppendVarint(b, f.f.Ref.Line)
}

var errFires = errors.New("resync fires: truncated or corrupt")

// readFires reads a shard: its number of shards, then what appendFire
// wrote.
func readFires(b []byte) (int, []shardFire, error) {
	shards, n := binary.Uvarint(b)
	if n <= 0 || shards == 0 || shards > math.MaxInt32 {
		return 0, nil, errFires
	}
	b = b[n:]
	var out []shardFire
	for len(b) > 0 {
		var f shardFire
		var u [4]uint64
		var v [5]int64
		ok := true
		next := func(signed bool, i int) {
			if !ok {
				return
			}
			var n int
			if signed {
				v[i], n = binary.Varint(b)
			} else {
				u[i], n = binary.Uvarint(b)
			}
			if n <= 0 {
				ok = false
				return
			}
			b = b[n:]
		}
		next(false, 0)
		if !ok || len(b) < 1 {
			return 0, nil, errFires
		}
		f.attempt, b = int(b[0]), b[1:]
		next(false, 1)
		if !ok || len(b) < 8 || f.attempt >= resyncAttempts {
			return 0, nil, errFires
		}
		f.f.Delay, b = math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:]
		next(true, 0)
		next(false, 2)
		for i := 1; i <= 4; i++ {
			next(true, i)
		}
		if !ok || u[0] > math.MaxInt32 || u[1] > math.MaxInt32 || u[2] > math.MaxInt32 ||
			v[1] != int64(int32(v[1])) || v[2] != int64(int32(v[2])) {
			return 0, nil, errFires
		}
		f.part, f.seq, f.f.Dev = int(u[0]), int(u[1]), int32(u[2])
		f.f.At, f.f.Ref = v[0], Ref{File: int32(v[1]), Source: int32(v[2]), Row: v[3], Line: v[4]}
		out = append(out, f)
	}
	return int(shards), out, nil
}
