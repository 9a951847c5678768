package dataset

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/internal/testkit"
)

// The writer engines measured against FileWriter (BenchmarkWriteEngines).

// agoSchema is the dataset schema as arrow-go's parquet schema nodes.
func agoSchema() *schema.GroupNode {
	fields := make(schema.FieldList, numColumns)
	for c, name := range columnNames {
		t := columnTypes[c]
		rep := parquet.Repetitions.Optional
		if t.required {
			rep = parquet.Repetitions.Required
		}
		var n schema.Node
		var err error
		switch {
		case t.logical == "string":
			n, err = schema.NewPrimitiveNodeLogical(name, rep, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)
		case t.logical == "timestamp":
			n, err = schema.NewPrimitiveNodeLogical(name, rep, schema.NewTimestampLogicalType(true, schema.TimeUnitMicros), parquet.Types.Int64, -1, -1)
		default:
			n, err = schema.NewPrimitiveNode(name, rep, agoType(t), -1, int32(t.length))
		}
		if err != nil {
			panic(err)
		}
		fields[c] = n
	}
	g, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		panic(err)
	}
	return g
}

func agoType(t columnType) parquet.Type {
	switch kindName(t.kind) {
	case "BOOLEAN":
		return parquet.Types.Boolean
	case "INT32":
		return parquet.Types.Int32
	case "INT64":
		return parquet.Types.Int64
	case "DOUBLE":
		return parquet.Types.Double
	case "FIXED_LEN_BYTE_ARRAY":
		return parquet.Types.FixedLenByteArray
	}
	return parquet.Types.ByteArray
}

type agoOptions struct {
	stats     bool // chunk statistics for every column
	pageIndex bool
	batch     int64
}

// agoWriter writes a dataset file with arrow-go's typed column writers.
type agoWriter struct {
	f       *os.File
	fw      *file.Writer
	rg      file.BufferedRowGroupWriter
	inGroup int
	max     int
	b       colBatch
	sources []string
}

func newAgoWriter(path string, sources []string, o agoOptions) (*agoWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	props := []parquet.WriterProperty{
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithCompressionLevel(1),
		parquet.WithDataPageVersion(parquet.DataPageV1),
		parquet.WithDictionaryDefault(false),
		parquet.WithEncoding(parquet.Encodings.Plain),
		parquet.WithStats(o.stats),
		parquet.WithPageIndexEnabled(o.pageIndex),
		parquet.WithDataPageSize(pageBufferSize),
		parquet.WithMaxRowGroupLength(DefaultRowGroupRows),
		parquet.WithBatchSize(o.batch),
		parquet.WithSortingColumns([]parquet.SortingColumn{{ColumnIdx: 0}, {ColumnIdx: 1}}),
	}
	for _, name := range []string{"client_id", "outcome", "host_id", "stage", "failure_class", "source", "origin"} {
		props = append(props, parquet.WithDictionaryFor(name, true))
	}
	for _, name := range []string{"client_id", "recorded_at", "origin"} {
		props = append(props, parquet.WithStatsFor(name, true))
	}
	props = append(props, parquet.WithCompressionFor("link", compress.Codecs.Uncompressed))
	meta := metadata.NewKeyValueMetadata()
	meta.Append(MetaSchemaVersion, strconv.Itoa(auditfmt.SchemaVersion))
	meta.Append(MetaSources, `["a"]`)
	fw := file.NewParquetWriter(f, agoSchema(), file.WithWriterProps(parquet.NewWriterProperties(props...)), file.WithWriteMetadata(meta))
	return &agoWriter{f: f, fw: fw, max: DefaultRowGroupRows, sources: sources}, nil
}

func (w *agoWriter) WriteChained(recs []auditfmt.Record, pos []hashchain.Pos) error {
	for len(recs) > 0 {
		if w.rg == nil {
			w.rg, w.inGroup = w.fw.AppendBufferedRowGroup(), 0
		}
		k := min(len(recs), w.max-w.inGroup, writeChunk*8)
		w.b.reset(k)
		for i := range recs[:k] {
			var p *hashchain.Pos
			if pos != nil {
				p = &pos[i]
			}
			if err := w.b.add(&recs[i], p, w.sources); err != nil {
				return err
			}
		}
		if err := w.flushBatch(); err != nil {
			return err
		}
		recs = recs[k:]
		if pos != nil {
			pos = pos[k:]
		}
		if w.inGroup += k; w.inGroup == w.max {
			if err := w.rg.Close(); err != nil {
				return err
			}
			w.rg = nil
		}
	}
	return nil
}

func (w *agoWriter) flushBatch() error {
	for c := range numColumns {
		cw, err := w.rg.Column(c)
		if err != nil {
			return err
		}
		var def []int16
		if !columnTypes[c].required {
			def = make([]int16, len(w.b.def[c]))
			for i, d := range w.b.def[c] {
				def[i] = int16(d)
			}
		}
		switch cw := cw.(type) {
		case *file.Int32ColumnChunkWriter:
			_, err = cw.WriteBatch(w.b.i32[c], def, nil)
		case *file.Int64ColumnChunkWriter:
			_, err = cw.WriteBatch(w.b.i64[c], def, nil)
		case *file.Float64ColumnChunkWriter:
			_, err = cw.WriteBatch(w.b.f64[c], def, nil)
		case *file.BooleanColumnChunkWriter:
			_, err = cw.WriteBatch(w.b.bools[c], def, nil)
		case *file.ByteArrayColumnChunkWriter:
			_, err = cw.WriteBatch(byteArrays(w.b.bytes[c]), def, nil)
		case *file.FixedLenByteArrayColumnChunkWriter:
			_, err = cw.WriteBatch(flbas(w.b.bytes[c]), def, nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func byteArrays(b [][]byte) []parquet.ByteArray {
	out := make([]parquet.ByteArray, len(b))
	for i := range b {
		out[i] = b[i]
	}
	return out
}

func flbas(b [][]byte) []parquet.FixedLenByteArray {
	out := make([]parquet.FixedLenByteArray, len(b))
	for i := range b {
		out[i] = b[i]
	}
	return out
}

func (w *agoWriter) Close() error {
	if w.rg != nil {
		if err := w.rg.Close(); err != nil {
			return err
		}
	}
	if err := w.fw.Close(); err != nil {
		return err
	}
	w.f.Sync()
	w.f.Close()
	return nil
}

var _ io.Closer = (*agoWriter)(nil)

type engineWriter interface {
	WriteChained([]auditfmt.Record, []hashchain.Pos) error
	Close() error
}

// BenchmarkWriteEngines writes the chained records of BenchmarkWriteFile
// with each engine; -count N alternates them.
func BenchmarkWriteEngines(b *testing.B) {
	recs := typicalRecords(1 << 20)
	pos := make([]hashchain.Pos, len(recs))
	for i := range recs {
		pos[i] = chainOf(&recs[i])
	}
	engines := []struct {
		name string
		open func(path string) (engineWriter, error)
	}{
		{"parquet-go-rows", func(p string) (engineWriter, error) {
			return newLegacyWriter(p, testkit.Sources, DefaultRowGroupRows, false)
		}},
		{"parquet-go-rows-tuned", func(p string) (engineWriter, error) {
			return newLegacyWriter(p, testkit.Sources, DefaultRowGroupRows, true)
		}},
		{"parquet-go-columns", func(p string) (engineWriter, error) { return newPgColumnWriter(p, testkit.Sources) }},
		{"arrow-go-typed", func(p string) (engineWriter, error) {
			return newAgoWriter(p, testkit.Sources, agoOptions{batch: 8192})
		}},
		{"pqarrow", func(p string) (engineWriter, error) { return newPqarrowWriter(p, testkit.Sources) }},
		{"chunks", func(p string) (engineWriter, error) { return CreateFile(p, testkit.Sources) }},
	}
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) { benchEngine(b, e.open, recs, pos) })
	}
}

func benchEngine(b *testing.B, open func(string) (engineWriter, error), recs []auditfmt.Record, pos []hashchain.Pos) {
	path := filepath.Join(b.TempDir(), "bench.parquet")
	var size int64
	cpu := testkit.CPUTime()
	for b.Loop() {
		w, err := open(path)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(recs); i += 8192 {
			j := min(i+8192, len(recs))
			if err := w.WriteChained(recs[i:j], pos[i:j]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		st, _ := os.Stat(path)
		size = st.Size()
	}
	reportRows(b, len(recs), cpu)
	b.ReportMetric(float64(size)/float64(len(recs)), "B/row")
}
