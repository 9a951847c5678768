package dataset

import (
	"bytes"
	"encoding/binary"
	"io"
	"strconv"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// chunkFile writes a dataset file a column chunk at a time: batches of
// rows go to the columnWriters, which cut pages as they fill, and each
// full row group is written column by column. The page index and the
// footer follow the last row group.
type chunkFile struct {
	out     io.Writer
	offset  int64
	cols    [numColumns]*columnWriter
	maxRows int
	rows    int // in the current row group
	total   int64
	groups  []format.RowGroup
	index   [][numColumns]chunkIndex
	meta    []format.KeyValue
}

// magic starts and ends a Parquet file.
const magic = "PAR1"

// createdBy names the writer in the footer.
const createdBy = "stormaudit"

func newChunkFile(out io.Writer, maxRows int, sources string) (*chunkFile, error) {
	f := &chunkFile{out: out, maxRows: maxRows, meta: []format.KeyValue{
		{Key: MetaSchemaVersion, Value: strconv.Itoa(auditfmt.SchemaVersion)},
		{Key: MetaSources, Value: sources},
	}}
	buf := new(pageBuffers)
	for c := range f.cols {
		f.cols[c] = newColumnWriter(c, buf)
	}
	return f, f.write([]byte(magic))
}

func (f *chunkFile) write(b []byte) error {
	n, err := f.out.Write(b)
	f.offset += int64(n)
	return err
}

// room returns how many rows the current row group has room for.
func (f *chunkFile) room() int { return f.maxRows - f.rows }

// writeBatch adds b, which must fit in the row group (room), to the file.
func (f *chunkFile) writeBatch(b *colBatch) error {
	for _, w := range f.cols {
		w.add(b)
		if w.pageFull() {
			if err := w.cutPage(); err != nil {
				return err
			}
		}
	}
	f.rows += b.n
	if f.rows == f.maxRows {
		return f.flushGroup()
	}
	return nil
}

// flushGroup writes the current row group, if it has rows.
func (f *chunkFile) flushGroup() error {
	if f.rows == 0 {
		return nil
	}
	rg := format.RowGroup{
		NumRows:        int64(f.rows),
		FileOffset:     f.offset,
		Ordinal:        int16(len(f.groups)),
		SortingColumns: []format.SortingColumn{{ColumnIdx: colClientID}, {ColumnIdx: colRecordedAt}},
	}
	var index [numColumns]chunkIndex
	cw := countWriter{f: f}
	for c, w := range f.cols {
		cc, idx, err := w.flush(&cw, f.offset)
		if err != nil {
			return err
		}
		if cw.err != nil {
			return cw.err
		}
		rg.Columns = append(rg.Columns, cc)
		rg.TotalByteSize += cc.MetaData.TotalUncompressedSize
		rg.TotalCompressedSize += cc.MetaData.TotalCompressedSize
		index[c] = idx
	}
	f.groups = append(f.groups, rg)
	f.index = append(f.index, index)
	f.total += int64(f.rows)
	f.rows = 0
	return nil
}

// countWriter writes to f, counting the offset.
type countWriter struct {
	f   *chunkFile
	err error
}

func (w *countWriter) Write(b []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.err = w.f.write(b)
	return len(b), w.err
}

// close writes the last row group, the page index and the footer.
func (f *chunkFile) close() error {
	if err := f.flushGroup(); err != nil {
		return err
	}
	if err := f.writePageIndex(); err != nil {
		return err
	}
	md := format.FileMetaData{
		Version:          2,
		Schema:           footerSchema().Schema,
		NumRows:          f.total,
		RowGroups:        f.groups,
		KeyValueMetadata: f.meta,
		CreatedBy:        createdBy,
		ColumnOrders:     footerSchema().ColumnOrders,
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return err
	}
	footer = binary.LittleEndian.AppendUint32(footer, uint32(len(footer)))
	return f.write(append(footer, magic...))
}

// writePageIndex writes the column indexes, then the offset indexes, of
// every column chunk in file order, as readers expect them: each kind in
// one contiguous run.
func (f *chunkFile) writePageIndex() error {
	var buf bytes.Buffer
	enc := thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&buf))
	for g := range f.groups {
		for c := range numColumns {
			ci := f.index[g][c].column
			if ci == nil {
				continue
			}
			start := f.offset + int64(buf.Len())
			if err := enc.Encode(ci); err != nil {
				return err
			}
			cc := &f.groups[g].Columns[c]
			cc.ColumnIndexOffset, cc.ColumnIndexLength = start, int32(f.offset+int64(buf.Len())-start)
		}
	}
	for g := range f.groups {
		for c := range numColumns {
			start := f.offset + int64(buf.Len())
			if err := enc.Encode(&f.index[g][c].offset); err != nil {
				return err
			}
			cc := &f.groups[g].Columns[c]
			cc.OffsetIndexOffset, cc.OffsetIndexLength = start, int32(f.offset+int64(buf.Len())-start)
		}
	}
	return f.write(buf.Bytes())
}

// footerSchema returns the schema elements and column orders of a dataset
// file's footer, as parquet-go writes them for the row type: the files
// keep the schema they had when parquet-go wrote them whole.
var footerSchema = sync.OnceValue(func() *format.FileMetaData {
	w := parquet.NewGenericWriter[row](io.Discard)
	if err := w.Close(); err != nil {
		panic("dataset: " + err.Error())
	}
	return w.File().Metadata()
})
