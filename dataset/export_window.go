package dataset

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// rowWindow is ExportOptions' Since and Until in Unix ns, [lo, hi).
type rowWindow struct {
	lo, hi int64
	on     bool
}

func newRowWindow(since, until time.Time) rowWindow {
	w := rowWindow{lo: -1 << 63, hi: 1<<63 - 1, on: !since.IsZero() || !until.IsZero()}
	if !since.IsZero() {
		w.lo = since.UnixNano()
	}
	if !until.IsZero() {
		w.hi = until.UnixNano()
	}
	return w
}

// keep returns the rows of rec recorded in the window, as a new batch
// (rec itself, retained, when every row is), and how many it left out.
// The rows kept are copied run by run: a dataset holds each device's
// records together, in time, so a window keeps few runs of a batch.
func (w rowWindow) keep(rec arrow.RecordBatch, mem memory.Allocator) (arrow.RecordBatch, int64, error) {
	col := -1
	for i, f := range rec.Schema().Fields() {
		if f.Name == "recorded_at" {
			col = i
		}
	}
	at, ok := rec.Column(max(col, 0)).(*array.Timestamp)
	if col < 0 || !ok {
		return nil, 0, fmt.Errorf("export: the batch has no recorded_at timestamp column")
	}
	var runs [][2]int64
	n := int64(at.Len())
	for i := int64(0); i < n; {
		for i < n && !w.in(int64(at.Value(int(i)))) {
			i++
		}
		j := i
		for j < n && w.in(int64(at.Value(int(j)))) {
			j++
		}
		if j > i {
			runs = append(runs, [2]int64{i, j})
		}
		i = j
	}
	kept := int64(0)
	for _, r := range runs {
		kept += r[1] - r[0]
	}
	if kept == n {
		rec.Retain()
		return rec, 0, nil
	}
	cols := make([]arrow.Array, rec.NumCols())
	for c := range cols {
		parts := make([]arrow.Array, 0, len(runs))
		for _, r := range runs {
			parts = append(parts, array.NewSlice(rec.Column(c), r[0], r[1]))
		}
		var err error
		if len(parts) == 0 {
			cols[c] = array.MakeArrayOfNull(mem, rec.Column(c).DataType(), 0)
		} else {
			cols[c], err = array.Concatenate(parts, mem)
		}
		for _, p := range parts {
			p.Release()
		}
		if err != nil {
			return nil, 0, err
		}
	}
	out := array.NewRecordBatch(rec.Schema(), cols, kept)
	for _, c := range cols {
		c.Release()
	}
	return out, n - kept, nil
}

func (w rowWindow) in(t int64) bool { return t >= w.lo && t < w.hi }
