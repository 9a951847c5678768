package dataset

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pq "github.com/parquet-go/parquet-go"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// arrowColumns are the Arrow fields of a dataset file's columns, by
// column: the Arrow type pqarrow reads each as, except that extra and
// envelope (JSON, which pqarrow reads as binary) are utf8 and recorded_at
// is in nanoseconds (recorded_at_ns added).
var arrowColumns = func() []arrow.Field {
	fields := make([]arrow.Field, numColumns)
	for c, t := range columnTypes {
		fields[c] = arrow.Field{Name: columnNames[c], Type: t.arrowType(), Nullable: !t.required}
	}
	return fields
}()

// arrowSchema is the Arrow schema of a dataset's rows: arrowColumns
// without recorded_at_ns, which recorded_at holds.
var arrowSchema = func() *arrow.Schema {
	fields := slices.Delete(slices.Clone(arrowColumns), colRecordedAtNs, colRecordedAtNs+1)
	meta := arrow.NewMetadata([]string{MetaSchemaVersion}, []string{strconv.Itoa(auditfmt.SchemaVersion)})
	return arrow.NewSchema(fields, &meta)
}()

func (t columnType) arrowType() arrow.DataType {
	switch t.kind {
	case pq.Boolean:
		return arrow.FixedWidthTypes.Boolean
	case pq.Int32:
		return arrow.PrimitiveTypes.Int32
	case pq.Int64:
		if t.logical == "timestamp" {
			return &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}
		}
		return arrow.PrimitiveTypes.Int64
	case pq.Double:
		return arrow.PrimitiveTypes.Float64
	case pq.FixedLenByteArray:
		return &arrow.FixedSizeBinaryType{ByteWidth: t.length}
	}
	return arrow.BinaryTypes.String
}

// DefaultBatchRows is the batch size OpenArrow uses for batchRows <= 0.
const DefaultBatchRows = 64 << 10

// ArrowReader yields the rows of a dataset as Arrow record batches, file
// after file in manifest order, reading the Parquet files with arrow-go's
// pqarrow. It holds one file open at a time and reads it a batch at a
// time, so its memory is bounded by the batch size and the page size, not
// by the size of the dataset. A batch never spans two files.
//
// An ArrowReader is not safe for concurrent use.
type ArrowReader struct {
	dir       string
	files     []File
	batchRows int64
	mem       memory.Allocator
	cur       *arrowFile
	proj      projection
	rowGroups []int // of the one file read, when reading a Part
}

// projection is the columns a reader returns, in dataset column order.
type projection struct {
	schema *arrow.Schema
	cols   []int  // dataset column of each field of schema
	dict   []bool // whether each is read as a dictionary array
}

// dictType is the Arrow type of a string column read as a dictionary.
var dictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// project returns the projection on the named columns, or all of them,
// with the columns named in dicts read as dictionaries.
// recorded_at_ns is never one: recorded_at comes in nanoseconds.
func project(names, dicts []string) (projection, error) {
	if len(names) == 0 {
		names = slices.DeleteFunc(slices.Clone(columnNames), func(n string) bool { return n == columnNames[colRecordedAtNs] })
	}
	if slices.Contains(names, columnNames[colRecordedAtNs]) {
		return projection{}, fmt.Errorf("dataset: column %s: read recorded_at, which holds it", columnNames[colRecordedAtNs])
	}
	var p projection
	var fields []arrow.Field
	for c, f := range arrowColumns {
		if c == colRecordedAtNs || !slices.Contains(names, f.Name) {
			continue
		}
		d := slices.Contains(dicts, f.Name)
		if d {
			if f.Type.ID() != arrow.STRING {
				return p, fmt.Errorf("dataset: column %s: only string columns can be read as dictionaries", f.Name)
			}
			f.Type = dictType
		}
		p.cols, p.dict = append(p.cols, c), append(p.dict, d)
		fields = append(fields, f)
	}
	if len(p.cols) != len(names) {
		return p, fmt.Errorf("dataset: columns %q: expected distinct names of dataset columns (%s)", names, columnNames)
	}
	meta := arrowSchema.Metadata()
	p.schema = arrow.NewSchema(fields, &meta)
	return p, nil
}

// OpenArrow opens the dataset in dir for reading as Arrow record batches of
// at most batchRows rows (DefaultBatchRows if batchRows <= 0).
func OpenArrow(dir string, batchRows int) (*ArrowReader, error) {
	return OpenArrowWith(dir, ArrowOptions{BatchRows: batchRows})
}

// Part is one row group of one file of a dataset: a unit that can be read
// on its own, in parallel with the others.
type Part struct {
	File     int   // index in Manifest.Files
	RowGroup int   // index in the file
	FirstRow int64 // the row group's first row in the file
	Rows     int64
}

// Parts returns the row groups of the dataset in dir, in dataset order.
func Parts(dir string) ([]Part, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	return PartsOf(dir, m, nil)
}

// PartsOf returns the row groups of the files of the dataset in dir that
// files lists, by index in m.Files (nil: every file), in that order. It
// reads the metadata of those files only.
func PartsOf(dir string, m *Manifest, files []int) (_ []Part, err error) {
	defer recoverCorrupt(dir, &err)
	if files == nil {
		files = make([]int, len(m.Files))
		for i := range files {
			files[i] = i
		}
	}
	var parts []Part
	for _, i := range files {
		if i < 0 || i >= len(m.Files) {
			return nil, fmt.Errorf("%s: file %d: the manifest lists %d files", dir, i, len(m.Files))
		}
		f := m.Files[i]
		path := filepath.Join(dir, f.Name)
		if err := checkFileFooter(path); err != nil {
			return nil, err
		}
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			return nil, fmt.Errorf("%s: not a Parquet file: %w", path, err)
		}
		var row int64
		for g := range pf.NumRowGroups() {
			n := pf.MetaData().RowGroup(g).NumRows()
			parts = append(parts, Part{File: i, RowGroup: g, FirstRow: row, Rows: n})
			row += n
		}
		pf.Close()
		if row != f.Rows {
			return nil, fmt.Errorf("%s: the file has %d rows, the manifest says %d", path, row, f.Rows)
		}
	}
	return parts, nil
}

// OpenArrowColumns is OpenArrow reading only the named columns.
func OpenArrowColumns(dir string, batchRows int, columns ...string) (*ArrowReader, error) {
	return OpenArrowWith(dir, ArrowOptions{BatchRows: batchRows, Columns: columns})
}

// ArrowOptions select what an ArrowReader reads.
type ArrowOptions struct {
	// BatchRows bounds the rows of a batch (DefaultBatchRows if <= 0).
	BatchRows int
	// Columns names the columns to read, which the batches hold in
	// dataset column order; the others are not read at all. Empty means
	// every column.
	Columns []string
	// Part, when set, restricts the reader to one row group of one file.
	Part *Part
	// Dictionaries names string columns to read as dictionary arrays
	// (dictionary<values=utf8, indices=int32>) rather than as utf8: for a
	// column of few distinct values (client_id, outcome, host_id, ...)
	// that spares building a string per row.
	Dictionaries []string
}

// OpenArrowWith is OpenArrow with options.
func OpenArrowWith(dir string, opts ArrowOptions) (*ArrowReader, error) {
	proj, err := project(opts.Columns, opts.Dictionaries)
	if err != nil {
		return nil, err
	}
	batchRows := opts.BatchRows
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if batchRows <= 0 {
		batchRows = DefaultBatchRows
	}
	r := &ArrowReader{dir: dir, files: m.Files, batchRows: int64(batchRows), mem: arrowMemory, proj: proj}
	if p := opts.Part; p != nil {
		if p.File < 0 || p.File >= len(m.Files) {
			return nil, fmt.Errorf("%s: part of file %d: the dataset has %d files", dir, p.File, len(m.Files))
		}
		r.files, r.rowGroups = m.Files[p.File:p.File+1], []int{p.RowGroup}
	}
	return r, nil
}

// Schema returns the schema of every batch: the dataset file columns in
// order (those asked for), recorded_at as timestamp[ns, tz=UTC], strings
// (extra and envelope included) as utf8, and the optional columns
// nullable.
func (r *ArrowReader) Schema() *arrow.Schema { return r.proj.schema }

// Next returns the next batch, or nil and io.EOF after the last. The caller
// releases the batch.
func (r *ArrowReader) Next() (_ arrow.RecordBatch, err error) {
	defer func() {
		if p := recover(); p != nil { // recover must be called here, by the deferred function itself
			name := r.dir
			switch {
			case r.cur != nil:
				name = r.cur.path
			case len(r.files) > 0:
				name = filepath.Join(r.dir, r.files[0].Name)
			}
			err = &CorruptError{File: name, Panic: p}
		}
	}()
	for {
		if r.cur == nil {
			if len(r.files) == 0 {
				return nil, io.EOF
			}
			f, err := openArrowFile(filepath.Join(r.dir, r.files[0].Name), r.files[0].Rows, r.batchRows, r.mem, &r.proj, r.rowGroups)
			if err != nil {
				return nil, err
			}
			r.cur, r.files = f, r.files[1:]
		}
		rec, err := r.cur.next()
		if err != io.EOF {
			return rec, err
		}
		if err := r.cur.close(); err != nil {
			return nil, err
		}
		r.cur = nil
	}
}

// Close closes the file being read.
func (r *ArrowReader) Close() error {
	r.files = nil
	if r.cur == nil {
		return nil
	}
	err := r.cur.close()
	r.cur = nil
	return err
}

// arrowFile reads one Parquet file of a dataset through pqarrow.
type arrowFile struct {
	path    string
	pf      *file.Reader
	rr      pqarrow.RecordReader // nil for a file without rows
	mem     memory.Allocator
	cols    [numColumns]int  // index in rr.Schema() of each column; -1 for one not read (see match)
	relabel [numColumns]bool // binary to be read as utf8
	want    int64            // rows the manifest promises
	rows    int64            // rows returned
	proj    *projection
	// rowGroups are the row groups to read (nil: all); want is then
	// their rows.
	rowGroups []int
	atScale   int64 // nanoseconds in a unit of the file's recorded_at
	nsCol     int   // index in the batches of recorded_at_ns; -1 if not read
	// allNull marks the optional columns whose every value in the row
	// groups read is null, by the column chunks' statistics: they are not
	// read but given as nulls, nulls[c], sliced to each batch.
	allNull [numColumns]bool
	nulls   [numColumns]arrow.Array
}

func openArrowFile(path string, want, batchRows int64, mem memory.Allocator, proj *projection, rowGroups []int) (*arrowFile, error) {
	if err := checkFileFooter(path); err != nil {
		return nil, err
	}
	props := parquet.NewReaderProperties(mem)
	props.BufferedStreamEnabled = true // read a page at a time, not a column chunk
	pf, err := file.OpenParquetFile(path, false, file.WithReadProps(props))
	if err != nil {
		return nil, fmt.Errorf("%s: not a Parquet file: %w", path, err)
	}
	f := &arrowFile{path: path, pf: pf, want: want, mem: mem, proj: proj, rowGroups: rowGroups}
	if err := f.init(batchRows); err != nil {
		pf.Close()
		return nil, err
	}
	return f, nil
}

func (f *arrowFile) init(batchRows int64) error {
	if n := f.pf.NumRows(); n != f.want {
		return fmt.Errorf("%s: the file has %d rows, the manifest says %d", f.path, n, f.want)
	}
	if f.rowGroups != nil {
		f.want = 0
		for _, g := range f.rowGroups {
			if g < 0 || g >= f.pf.NumRowGroups() {
				return fmt.Errorf("%s: row group %d: the file has %d", f.path, g, f.pf.NumRowGroups())
			}
			f.want += f.pf.MetaData().RowGroup(g).NumRows()
		}
	}
	props := pqarrow.ArrowReadProperties{BatchSize: batchRows}
	for i, c := range f.proj.cols {
		if f.proj.dict[i] {
			if leaf := f.pf.MetaData().Schema.ColumnIndexByName(columnNames[c]); leaf >= 0 {
				props.SetReadDict(leaf, true)
			}
		}
	}
	fr, err := pqarrow.NewFileReader(f.pf, props, f.mem)
	if err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	sc, err := fr.Schema()
	if err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	for i, c := range f.proj.cols {
		f.allNull[c] = f.proj.schema.Field(i).Nullable && f.nullChunks(columnNames[c])
	}
	leaves, err := f.match(sc)
	if err != nil || f.want == 0 {
		return err
	}
	rr, err := fr.GetRecordReader(context.Background(), leaves, f.rowGroups)
	if err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	f.rr = rr
	// The reader's schema holds only the columns asked for.
	_, err = f.match(rr.Schema())
	return err
}

// nullChunks reports whether the statistics of the column chunks of the
// named column, in the row groups read, say that they hold only nulls.
// Most records lack most optional fields (a fleet whose clients do not
// write outbox_depth, or stage): such a column costs nothing to read.
func (f *arrowFile) nullChunks(name string) bool {
	md := f.pf.MetaData()
	leaf := md.Schema.ColumnIndexByName(name)
	if leaf < 0 {
		return false
	}
	groups := f.rowGroups
	if groups == nil {
		groups = make([]int, f.pf.NumRowGroups())
		for g := range groups {
			groups[g] = g
		}
	}
	for _, g := range groups {
		rg := md.RowGroup(g)
		cc, err := rg.ColumnChunk(leaf)
		if err != nil {
			return false
		}
		if set, err := cc.StatsSet(); !set || err != nil {
			return false
		}
		st, err := cc.Statistics()
		if err != nil || st == nil || !st.HasNullCount() || st.NullCount() != rg.NumRows() {
			return false
		}
	}
	return true
}

// match finds the dataset columns in the Arrow schema pqarrow gives the
// file, checks their types, and returns their Parquet leaf column indices.
// A file may lack all the chain columns, and the columns mayLack allows;
// they read as nulls, as do the columns of only nulls (allNull), which are
// not read.
func (f *arrowFile) match(sc *arrow.Schema) ([]int, error) {
	leaves := make([]int, 0, numColumns)
	chained := sc.HasField(columnNames[colOrigin])
	f.nsCol = -1
	for i, c := range f.proj.cols {
		want := f.proj.schema.Field(i)
		idx := sc.FieldIndices(want.Name)
		if len(idx) == 0 && (isChainColumn(c) && !chained || mayLack(c) || f.allNull[c]) {
			f.cols[c] = -1
			continue
		}
		if len(idx) == 0 {
			return nil, &ColumnError{File: f.path, Column: want.Name, Expected: want.Type.String()}
		}
		got := sc.Field(idx[0])
		switch {
		case c == colRecordedAt:
			if f.atScale = arrowTimeScale(got.Type); f.atScale == 0 {
				return nil, &ColumnError{File: f.path, Column: want.Name, Expected: "timestamp[us, tz=UTC]", Found: got.Type.String()}
			}
		case arrow.TypeEqual(got.Type, want.Type):
		case want.Type.ID() == arrow.STRING && got.Type.ID() == arrow.BINARY:
			f.relabel[c] = true
		default:
			return nil, &ColumnError{File: f.path, Column: want.Name, Expected: want.Type.String(), Found: got.Type.String()}
		}
		if f.allNull[c] {
			f.cols[c] = -1
			continue
		}
		f.cols[c] = idx[0]
		leaves = append(leaves, f.pf.MetaData().Schema.ColumnIndexByName(want.Name))
		if c == colRecordedAt {
			// its nanoseconds past the microsecond, when the file has them
			name := columnNames[colRecordedAtNs]
			if k := sc.FieldIndices(name); len(k) > 0 {
				if sc.Field(k[0]).Type.ID() != arrow.INT32 {
					return nil, &ColumnError{File: f.path, Column: name, Expected: "int32", Found: sc.Field(k[0]).Type.String()}
				}
				f.nsCol = k[0]
				leaves = append(leaves, f.pf.MetaData().Schema.ColumnIndexByName(name))
			}
		}
	}
	return leaves, nil
}

// arrowTimeScale returns the nanoseconds in a unit of the UTC timestamp
// type t (1000 for microseconds, 1 for nanoseconds), or 0.
func arrowTimeScale(t arrow.DataType) int64 {
	ts, ok := t.(*arrow.TimestampType)
	if !ok || ts.TimeZone != "UTC" {
		return 0
	}
	switch ts.Unit {
	case arrow.Microsecond:
		return 1000
	case arrow.Nanosecond:
		return 1
	}
	return 0
}

// next returns the next batch of the file in the dataset schema, or io.EOF.
func (f *arrowFile) next() (arrow.RecordBatch, error) {
	if f.rr == nil {
		return nil, io.EOF
	}
	rec, err := f.rr.Read()
	if err == io.EOF || err == nil && rec == nil {
		if f.rows != f.want {
			return nil, fmt.Errorf("%s: %d rows read, the manifest says %d", f.path, f.rows, f.want)
		}
		return nil, io.EOF
	}
	if err != nil {
		return nil, fmt.Errorf("%s: row %d: %w", f.path, f.rows, err)
	}
	out, err := f.conform(rec)
	if err != nil {
		return nil, err
	}
	f.rows += rec.NumRows()
	return out, nil
}

// conform returns rec's columns as a batch of the dataset schema. rec stays
// owned by the record reader.
func (f *arrowFile) conform(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(f.proj.cols))
	var made []arrow.Array
	defer func() {
		for _, a := range made {
			a.Release()
		}
	}()
	for i, c := range f.proj.cols {
		if f.cols[c] < 0 {
			a := f.nullArray(i, c, rec.NumRows())
			made = append(made, a)
			cols[i] = a
			continue
		}
		a := rec.Column(f.cols[c])
		if !arrowColumns[c].Nullable && a.NullN() > 0 {
			return nil, fmt.Errorf("%s: row %d: %s: expected a value, found null", f.path, f.rows+firstNull(a), columnNames[c])
		}
		if f.relabel[c] {
			s, err := f.asString(c, a)
			if err != nil {
				return nil, err
			}
			made = append(made, s)
			a = s
		}
		if c == colRecordedAt && (f.atScale != 1 || f.nsCol >= 0) {
			t, err := f.nanos(a, rec)
			if err != nil {
				return nil, err
			}
			made = append(made, t)
			a = t
		}
		cols[i] = a
	}
	return array.NewRecordBatch(f.proj.schema, cols, rec.NumRows()), nil
}

// nullArray returns n nulls for column c, field i of the batches: a slice
// of nulls[c], made once for the file.
func (f *arrowFile) nullArray(i, c int, n int64) arrow.Array {
	if f.nulls[c] == nil || int64(f.nulls[c].Len()) < n {
		if f.nulls[c] != nil {
			f.nulls[c].Release()
		}
		f.nulls[c] = array.MakeArrayOfNull(f.mem, f.proj.schema.Field(i).Type, int(n))
	}
	return array.NewSlice(f.nulls[c], 0, n)
}

// asString returns the binary array a as utf8, sharing its buffers, after
// checking that every value is UTF-8.
func (f *arrowFile) asString(c int, a arrow.Array) (arrow.Array, error) {
	b := a.(*array.Binary)
	for i := range b.Len() {
		if b.IsValid(i) && !utf8.Valid(b.Value(i)) {
			return nil, fmt.Errorf("%s: row %d: %s: expected UTF-8 text, found %q", f.path, f.rows+int64(i), columnNames[c], b.Value(i))
		}
	}
	d := a.Data()
	sd := array.NewData(arrow.BinaryTypes.String, d.Len(), d.Buffers(), nil, d.NullN(), d.Offset())
	defer sd.Release()
	return array.NewStringData(sd), nil
}

// nanos returns recorded_at, a, in nanoseconds: its values times the
// file's unit, plus recorded_at_ns where it is not null.
func (f *arrowFile) nanos(a arrow.Array, rec arrow.RecordBatch) (arrow.Array, error) {
	in := a.(*array.Timestamp).TimestampValues()
	var ns *array.Int32
	if f.nsCol >= 0 {
		ns = rec.Column(f.nsCol).(*array.Int32)
	}
	out := make([]arrow.Timestamp, len(in))
	for i, v := range in {
		if int64(v) > math.MaxInt64/f.atScale || int64(v) < math.MinInt64/f.atScale {
			return nil, fmt.Errorf("%s: row %d: %s: expected a time from 1678 to 2261, found %d units of %d ns", f.path, f.rows+int64(i), columnNames[colRecordedAt], v, f.atScale)
		}
		out[i] = v * arrow.Timestamp(f.atScale)
		if ns != nil && ns.IsValid(i) {
			if k := ns.Value(i); k >= 1 && k <= 999 && f.atScale == 1000 {
				out[i] += arrow.Timestamp(k)
			} else {
				return nil, fmt.Errorf("%s: row %d: %s: expected null, or nanoseconds from 1 to 999 past a recorded_at in microseconds, found %d",
					f.path, f.rows+int64(i), columnNames[colRecordedAtNs], k)
			}
		}
	}
	buf := memory.NewBufferBytes(arrow.TimestampTraits.CastToBytes(out))
	d := array.NewData(arrowColumns[colRecordedAt].Type, len(out), []*memory.Buffer{nil, buf}, nil, 0, 0)
	defer d.Release()
	return array.NewTimestampData(d), nil
}

func firstNull(a arrow.Array) int64 {
	for i := range a.Len() {
		if a.IsNull(i) {
			return int64(i)
		}
	}
	return 0
}

func (f *arrowFile) close() error {
	for c, a := range f.nulls {
		if a != nil {
			a.Release()
			f.nulls[c] = nil
		}
	}
	if f.rr != nil {
		f.rr.Release()
		f.rr = nil
	}
	return f.pf.Close()
}
