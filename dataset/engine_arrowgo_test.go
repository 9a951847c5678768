package dataset

import (
	"encoding/json"
	"io"
	"os"
	"strconv"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// agoWriter: arrow-go's typed column writers (file.Writer), measured in
// BenchmarkWriteEngines.

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

// agoProperties are the arrow-go writer properties closest to FileWriter's.
func agoProperties(o agoOptions) *parquet.WriterProperties {
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
	return parquet.NewWriterProperties(props...)
}

func newAgoWriter(path string, sources []string, o agoOptions) (*agoWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	meta := metadata.NewKeyValueMetadata()
	meta.Append(MetaSchemaVersion, strconv.Itoa(auditfmt.SchemaVersion))
	names, _ := json.Marshal(sources)
	meta.Append(MetaSources, string(names))
	fw := file.NewParquetWriter(f, agoSchema(), file.WithWriterProps(agoProperties(o)), file.WithWriteMetadata(meta))
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
