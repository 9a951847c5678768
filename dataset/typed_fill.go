package dataset

import (
	"github.com/parquet-go/parquet-go"
)

// typedBufs are a FileReader's buffers for the columns it reads as typed
// values rather than parquet.Values: the required numbers and booleans
// that every row has, most of the values a file holds.
type typedBufs struct {
	i64   []int64
	f64   []float64
	bools []bool
}

func newTypedBufs() typedBufs {
	return typedBufs{i64: make([]int64, readBatch), f64: make([]float64, readBatch), bools: make([]bool, readBatch)}
}

// fillTyped reads values of column c for the rows of the batch from done
// on, as typed values, when c is such a column and its page offers them;
// ok false otherwise, having read nothing.
func (r *FileReader) fillTyped(c, done int) (k int, ok bool, err error) {
	recs := r.batch[done:]
	cr := r.cols[c]
	switch c {
	case colRecordedAt, colAttempt, colLine:
		buf := r.typed.i64[:len(recs)]
		k, ok, err = cr.typed(func(v parquet.ValueReader) (int, bool, error) {
			tr, ok := v.(parquet.Int64Reader)
			if !ok {
				return 0, false, nil
			}
			n, err := tr.ReadInt64s(buf)
			return n, true, err
		})
		for i := range k {
			switch c {
			case colRecordedAt:
				if err := r.dec.setRecordedAt(&recs[i], buf[i]); err != nil && r.errs[done+i] == nil {
					r.errs[done+i] = err
				}
			case colAttempt:
				recs[i].Attempt = buf[i]
			case colLine:
				recs[i].Line = buf[i]
			}
		}
	case colBackoffDelayS:
		buf := r.typed.f64[:len(recs)]
		k, ok, err = cr.typed(func(v parquet.ValueReader) (int, bool, error) {
			tr, ok := v.(parquet.DoubleReader)
			if !ok {
				return 0, false, nil
			}
			n, err := tr.ReadDoubles(buf)
			return n, true, err
		})
		for i := range k {
			recs[i].BackoffDelayS = buf[i]
		}
	case colCleanSession:
		buf := r.typed.bools[:len(recs)]
		k, ok, err = cr.typed(func(v parquet.ValueReader) (int, bool, error) {
			tr, ok := v.(parquet.BooleanReader)
			if !ok {
				return 0, false, nil
			}
			n, err := tr.ReadBooleans(buf)
			return n, true, err
		})
		for i := range k {
			recs[i].CleanSession = buf[i]
		}
	}
	return k, ok, err
}
