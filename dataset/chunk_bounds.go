package dataset

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/parquet-go/parquet-go"
)

// bounds are the min and max of some values of a column, encoded as in
// Parquet statistics: little-endian numbers, 0/1 booleans, raw bytes.
type bounds struct {
	min, max []byte
	ok       bool // false while no value has been seen
}

// merge widens b to include o.
func (b *bounds) merge(kind parquet.Kind, o *bounds) {
	if !o.ok {
		return
	}
	if !b.ok {
		b.min, b.max, b.ok = append(b.min[:0], o.min...), append(b.max[:0], o.max...), true
		return
	}
	if statLess(kind, o.min, b.min) {
		b.min = append(b.min[:0], o.min...)
	}
	if statLess(kind, b.max, o.max) {
		b.max = append(b.max[:0], o.max...)
	}
}

func (b *bounds) reset() { b.min, b.max, b.ok = b.min[:0], b.max[:0], false }

// statLess compares two encoded values of a column of kind.
func statLess(kind parquet.Kind, x, y []byte) bool {
	switch kind {
	case parquet.Boolean:
		return x[0] < y[0]
	case parquet.Int32:
		return int32(binary.LittleEndian.Uint32(x)) < int32(binary.LittleEndian.Uint32(y))
	case parquet.Int64:
		return int64(binary.LittleEndian.Uint64(x)) < int64(binary.LittleEndian.Uint64(y))
	case parquet.Double:
		return math.Float64frombits(binary.LittleEndian.Uint64(x)) < math.Float64frombits(binary.LittleEndian.Uint64(y))
	}
	return bytes.Compare(x, y) < 0
}

// batchBounds sets b to the bounds of column c's values in a batch.
func batchBounds(b *bounds, cb *colBatch, c int) {
	b.reset()
	switch columnTypes[c].kind {
	case parquet.Boolean:
		boolBounds(b, cb.bools[c])
	case parquet.Int32:
		intBounds(b, cb.i32[c], func(dst []byte, v int32) []byte { return binary.LittleEndian.AppendUint32(dst, uint32(v)) })
	case parquet.Int64:
		intBounds(b, cb.i64[c], func(dst []byte, v int64) []byte { return binary.LittleEndian.AppendUint64(dst, uint64(v)) })
	case parquet.Double:
		doubleBounds(b, cb.f64[c])
	default:
		bytesBounds(b, cb.bytes[c])
	}
}

func intBounds[T int32 | int64](b *bounds, v []T, enc func([]byte, T) []byte) {
	if len(v) == 0 {
		return
	}
	lo, hi := v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	b.min, b.max, b.ok = enc(b.min, lo), enc(b.max, hi), true
}

// doubleBounds leaves NaN out, and widens a zero bound to -0 (min) and +0
// (max), as the format asks.
func doubleBounds(b *bounds, v []float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	if lo > hi {
		return
	}
	if lo == 0 {
		lo = math.Copysign(0, -1)
	}
	if hi == 0 {
		hi = 0
	}
	b.min = binary.LittleEndian.AppendUint64(b.min, math.Float64bits(lo))
	b.max = binary.LittleEndian.AppendUint64(b.max, math.Float64bits(hi))
	b.ok = true
}

func boolBounds(b *bounds, v []bool) {
	if len(v) == 0 {
		return
	}
	var lo, hi byte = 1, 0
	for _, x := range v {
		if x {
			hi = 1
		} else {
			lo = 0
		}
	}
	b.min, b.max, b.ok = append(b.min, lo), append(b.max, hi), true
}

// bytesBounds compares a value only when it differs from the one before,
// which in sorted columns is seldom.
func bytesBounds(b *bounds, v [][]byte) {
	if len(v) == 0 {
		return
	}
	lo, hi, prev := v[0], v[0], v[0]
	for _, x := range v[1:] {
		if string(x) == string(prev) {
			continue
		}
		prev = x
		if bytes.Compare(x, lo) < 0 {
			lo = x
		} else if bytes.Compare(x, hi) > 0 {
			hi = x
		}
	}
	b.min, b.max, b.ok = append(b.min, lo...), append(b.max, hi...), true
}
