package dataset

import (
	"encoding/json"
	"os"

	pq "github.com/parquet-go/parquet-go"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// pgColumnWriter writes through parquet-go's ColumnWriters, a column's
// values at a time.
type pgColumnWriter struct {
	f       *os.File
	pw      *pq.Writer
	b       colBatch
	vals    []pq.Value
	sources []string
	inGroup int
}

func newPgColumnWriter(path string, sources []string) (*pgColumnWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	names, _ := json.Marshal(sources)
	opts := append(legacyOptions(DefaultRowGroupRows, string(names)), fileSchema)
	return &pgColumnWriter{f: f, pw: pq.NewWriter(f, opts...), sources: sources}, nil
}

func (w *pgColumnWriter) WriteChained(recs []auditfmt.Record, pos []hashchain.Pos) error {
	for len(recs) > 0 {
		k := min(len(recs), DefaultRowGroupRows-w.inGroup)
		w.b.reset(k)
		for i := range recs[:k] {
			if err := w.b.add(&recs[i], &pos[i], w.sources); err != nil {
				return err
			}
		}
		cols := w.pw.ColumnWriters()
		for c := range numColumns {
			w.vals = columnValues(w.vals[:0], &w.b, c)
			if _, err := cols[c].WriteRowValues(w.vals); err != nil {
				return err
			}
		}
		recs, pos = recs[k:], pos[k:]
		if w.inGroup += k; w.inGroup == DefaultRowGroupRows {
			if err := w.pw.Flush(); err != nil {
				return err
			}
			w.inGroup = 0
		}
	}
	return nil
}

// columnValues appends column c of b as parquet-go Values.
func columnValues(dst []pq.Value, b *colBatch, c int) []pq.Value {
	k := 0
	for i := range b.n {
		def := 0
		if !columnTypes[c].required {
			def = int(b.def[c][i])
		}
		if columnTypes[c].required || def == 1 {
			var v pq.Value
			switch kindName(columnTypes[c].kind) {
			case "BOOLEAN":
				v = pq.BooleanValue(b.bools[c][k])
			case "INT32":
				v = pq.Int32Value(b.i32[c][k])
			case "INT64":
				v = pq.Int64Value(b.i64[c][k])
			case "DOUBLE":
				v = pq.DoubleValue(b.f64[c][k])
			case "FIXED_LEN_BYTE_ARRAY":
				v = pq.FixedLenByteArrayValue(b.bytes[c][k])
			default:
				v = pq.ByteArrayValue(b.bytes[c][k])
			}
			k++
			dst = append(dst, v.Level(0, def, c))
			continue
		}
		dst = append(dst, pq.NullValue().Level(0, 0, c))
	}
	return dst
}

func (w *pgColumnWriter) Close() error {
	if err := w.pw.Close(); err != nil {
		return err
	}
	w.f.Sync()
	return w.f.Close()
}
