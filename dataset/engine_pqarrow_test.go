package dataset

import (
	"encoding/json"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// arrowType is the Arrow type pqarrow writes column c from.
func arrowType(c int) arrow.DataType {
	t := columnTypes[c]
	switch {
	case t.logical == "string":
		return arrow.BinaryTypes.String
	case t.logical == "timestamp":
		return &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	}
	switch kindName(t.kind) {
	case "BOOLEAN":
		return arrow.FixedWidthTypes.Boolean
	case "INT32":
		return arrow.PrimitiveTypes.Int32
	case "INT64":
		return arrow.PrimitiveTypes.Int64
	case "DOUBLE":
		return arrow.PrimitiveTypes.Float64
	}
	return &arrow.FixedSizeBinaryType{ByteWidth: 32}
}

// pqarrowWriter writes through pqarrow, from Arrow builders.
type pqarrowWriter struct {
	f       *os.File
	fw      *pqarrow.FileWriter
	rb      *array.RecordBuilder
	b       colBatch
	sources []string
}

func newPqarrowWriter(path string, sources []string) (*pqarrowWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, numColumns)
	for c, name := range columnNames {
		fields[c] = arrow.Field{Name: name, Type: arrowType(c), Nullable: !columnTypes[c].required}
	}
	names, _ := json.Marshal(sources)
	md := arrow.NewMetadata([]string{MetaSchemaVersion, MetaSources}, []string{"1", string(names)})
	sc := arrow.NewSchema(fields, &md)
	w := &pqarrowWriter{f: f, sources: sources, rb: array.NewRecordBuilder(memory.DefaultAllocator, sc)}
	w.fw, err = pqarrow.NewFileWriter(sc, f, agoProperties(agoOptions{batch: 8192}), pqarrow.NewArrowWriterProperties())
	return w, err
}

func (w *pqarrowWriter) WriteChained(recs []auditfmt.Record, pos []hashchain.Pos) error {
	w.b.reset(len(recs))
	for i := range recs {
		if err := w.b.add(&recs[i], &pos[i], w.sources); err != nil {
			return err
		}
	}
	for c := range numColumns {
		w.appendColumn(c)
	}
	rec := w.rb.NewRecordBatch()
	defer rec.Release()
	return w.fw.WriteBuffered(rec)
}

func (w *pqarrowWriter) appendColumn(c int) {
	valid := make([]bool, w.b.n)
	for i := range valid {
		valid[i] = columnTypes[c].required || w.b.def[c][i] == 1
	}
	var v []bool
	if !columnTypes[c].required {
		v = valid
	}
	switch bld := w.rb.Field(c).(type) {
	case *array.StringBuilder:
		strs := make([]string, w.b.n)
		k := 0
		for i := range strs {
			if valid[i] {
				strs[i] = string(w.b.bytes[c][k])
				k++
			}
		}
		bld.AppendValues(strs, v)
	case *array.TimestampBuilder:
		ts := make([]arrow.Timestamp, w.b.n)
		for i, x := range w.b.i64[c] {
			ts[i] = arrow.Timestamp(x)
		}
		bld.AppendValues(ts, v)
	case *array.Int32Builder:
		bld.AppendValues(spread(w.b.i32[c], valid), v)
	case *array.Int64Builder:
		bld.AppendValues(spread(w.b.i64[c], valid), v)
	case *array.Float64Builder:
		bld.AppendValues(spread(w.b.f64[c], valid), v)
	case *array.BooleanBuilder:
		bld.AppendValues(spread(w.b.bools[c], valid), v)
	case *array.FixedSizeBinaryBuilder:
		bld.AppendValues(spread(w.b.bytes[c], valid), v)
	}
}

// spread places dense values at the valid rows.
func spread[T any](dense []T, valid []bool) []T {
	out := make([]T, len(valid))
	k := 0
	for i := range out {
		if valid[i] {
			out[i] = dense[k]
			k++
		}
	}
	return out
}

func (w *pqarrowWriter) Close() error {
	if err := w.fw.Close(); err != nil {
		return err
	}
	w.f.Sync()
	w.f.Close()
	return nil
}
