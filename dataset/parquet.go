package dataset

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strconv"

	"github.com/stormaudit/stormaudit/hashchain"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// Key-value metadata of a dataset file.
const (
	// MetaSchemaVersion holds the record schema version, "1".
	MetaSchemaVersion = "stormaudit.schema_version"
	// MetaSources holds the names of the inputs, a JSON array of strings
	// indexed by Record.Source. Readers number sources by it, so the
	// files of one dataset agree on the numbers.
	MetaSources = "stormaudit.sources"
)

// DefaultRowGroupRows is the default maximum number of rows in a row group.
const DefaultRowGroupRows = 128 << 10

// The writer's tuning, measured with BenchmarkWriteFile (see the notes
// there).
const (
	writeChunk      = 8192      // rows converted to columns at a time
	maxBatchBytes   = 16 << 20  // and at most about this many bytes of strings (records reach 1 MiB)
	pageBufferSize  = 256 << 10 // uncompressed bytes buffered per column before a page is cut
	writeBufferSize = 1 << 20   // bytes buffered before a write to the file
)

// codec is shared by all writers so that its pool of zstd encoders is.
var codec = &zstd.Codec{Level: zstd.SpeedFastest}

// A FileOption configures a FileWriter.
type FileOption func(*fileConfig)

type fileConfig struct {
	rowGroupRows int
}

func (c *fileConfig) validate() error {
	if c.rowGroupRows <= 0 {
		return fmt.Errorf("row group rows: expected a number > 0, found %d", c.rowGroupRows)
	}
	return nil
}

// RowGroupRows sets the maximum number of rows in a row group
// (default DefaultRowGroupRows).
func RowGroupRows(n int) FileOption {
	return func(c *fileConfig) { c.rowGroupRows = n }
}

// FileWriter writes records, already sorted, to one Parquet file of a
// dataset: zstd compression, row groups of at most RowGroupRows rows, the
// sorting columns client_id, recorded_at declared in the metadata and
// key-value metadata stormaudit.schema_version=1 and stormaudit.sources.
//
// It encodes the column chunks itself (chunkFile), from batches of
// records turned into columns; parquet-go's row writer took several times
// the CPU (BenchmarkWriteFile).
//
// The caller sorts: the file declares that order to every reader, but
// Write does not check it.
//
// A FileWriter is not safe for concurrent use.
type FileWriter struct {
	path    string
	f       *os.File
	buf     *bufio.Writer
	out     hashWriter
	cf      *chunkFile
	sources []string
	batch   colBatch

	n         int64
	rowGroups int
	sum       string
	err       error // the first error; it ends the file
	closed    bool
}

// CreateFile creates the Parquet file path, replacing any file there.
// sources maps Record.Source to the input's name, which is stored in the
// source column.
func CreateFile(path string, sources []string, opts ...FileOption) (*FileWriter, error) {
	cfg := fileConfig{rowGroupRows: DefaultRowGroupRows}
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	names, err := json.Marshal(sources)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &FileWriter{path: path, f: f, sources: sources}
	w.out = hashWriter{w: f, h: sha256.New()}
	w.buf = bufio.NewWriterSize(&w.out, writeBufferSize)
	if w.cf, err = newChunkFile(w.buf, cfg.rowGroupRows, string(names)); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// Write appends records to the file, without chain positions: the chain
// columns are null. The records should be sorted by client_id, then
// recorded_at, and follow those written before. After an error the file is
// unusable; Close removes it.
func (w *FileWriter) Write(recs []auditfmt.Record) error {
	return w.write(recs, nil)
}

// WriteChained is Write with the chain position of each record: pos[i] goes
// in the chain columns of recs[i]. len(pos) must be len(recs).
func (w *FileWriter) WriteChained(recs []auditfmt.Record, pos []hashchain.Pos) error {
	if len(pos) != len(recs) {
		return fmt.Errorf("%s: %d records but %d chain positions", w.path, len(recs), len(pos))
	}
	return w.write(recs, pos)
}

// write writes recs and, if pos is not nil, their chain positions.
func (w *FileWriter) write(recs []auditfmt.Record, pos []hashchain.Pos) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return fmt.Errorf("%s: write after close", w.path)
	}
	for len(recs) > 0 {
		k := min(len(recs), writeChunk, w.cf.room())
		var p []hashchain.Pos
		if pos != nil {
			p = pos[:k]
		}
		n, err := w.writeChunk(recs[:k], p)
		if err != nil {
			w.err = err
			return err
		}
		recs = recs[n:]
		if pos != nil {
			pos = pos[n:]
		}
	}
	return nil
}

// writeChunk writes the first records of recs, which fit in the current
// row group, up to maxBatchBytes of strings (so that no page nears the
// format's 2 GiB), and returns how many it wrote.
func (w *FileWriter) writeChunk(recs []auditfmt.Record, pos []hashchain.Pos) (int, error) {
	b := &w.batch
	b.reset(len(recs))
	for i := range recs {
		var p *hashchain.Pos
		if pos != nil {
			p = &pos[i]
		}
		if err := b.add(&recs[i], p, w.sources); err != nil {
			return 0, &RowError{File: w.path, Row: w.n + int64(i), Err: err}
		}
		if b.size >= maxBatchBytes {
			break
		}
	}
	if err := w.cf.writeBatch(b); err != nil {
		return 0, fmt.Errorf("%s: %w", w.path, err)
	}
	w.n += int64(b.n)
	n := b.n
	b.release()
	return n, nil
}

// Close writes the footer, syncs the file to disk and closes it. If Write
// or Close failed, the file is removed and the error returned.
func (w *FileWriter) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	err := w.err
	if err == nil {
		if err = w.cf.close(); err == nil {
			err = w.buf.Flush()
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", w.path, err)
		}
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(w.path)
		w.err = err
		return err
	}
	w.rowGroups = len(w.cf.groups)
	w.sum = hex.EncodeToString(w.out.h.Sum(nil))
	w.sources, w.cf = nil, nil
	return nil
}

// Rows returns the number of rows written so far.
func (w *FileWriter) Rows() int64 { return w.n }

// RowGroups returns the number of row groups in the file, after Close.
func (w *FileWriter) RowGroups() int { return w.rowGroups }

// SHA256 returns the SHA-256 of the file's bytes in hex, after Close.
func (w *FileWriter) SHA256() string { return w.sum }

// hashWriter writes to w and hashes what it writes.
type hashWriter struct {
	w io.Writer
	h hash.Hash
}

func (hw *hashWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	return n, err
}

// RowError places an error at a row of a Parquet file.
type RowError struct {
	File string // the file's path
	Row  int64  // 0-based row index within the file
	Err  error  // usually an *auditfmt.FieldError naming the field
}

// Error returns "file: row N: field: expected ..., found ...".
func (e *RowError) Error() string { return fmt.Sprintf("%s: row %d: %v", e.File, e.Row, e.Err) }

// Unwrap returns the underlying error.
func (e *RowError) Unwrap() error { return e.Err }

// ColumnError says that a Parquet file is not a dataset file: it lacks a
// column, or has it with another type.
type ColumnError struct {
	File     string // the file's path
	Column   string // the column's name
	Expected string // the column's type in a dataset file, for example "INT64"
	Found    string // what the file has; "" if it has no such column
}

// Error names the file and the column and says what was expected.
func (e *ColumnError) Error() string {
	if e.Found == "" {
		return fmt.Sprintf("%s: not a stormaudit dataset file: no column %s (expected %s)", e.File, e.Column, e.Expected)
	}
	return fmt.Sprintf("%s: not a stormaudit dataset file: column %s: expected %s, found %s", e.File, e.Column, e.Expected, e.Found)
}

// readBatch is the most rows a FileReader decodes at a time.
const readBatch = 1024

// readMode says whether a FileReader decodes the chain columns. The first
// Read or ReadChain decides.
type readMode uint8

const (
	readUndecided readMode = iota
	readRecords            // Read: the chain columns are skipped
	readChained            // ReadChain: the chain columns are decoded
)

// FileReader reads the records of one Parquet file of a dataset (or one
// written to the same schema by another program) in row order.
//
// It reads a batch of rows a column at a time, straight from the column
// chunks, and hands out the batch's records.
//
// A FileReader is not safe for concurrent use.
type FileReader struct {
	path   string
	f      *os.File
	pf     *parquet.File
	index  [numColumns]int // leaf column index of each of our columns; -1 for absent chain columns
	groups []parquet.RowGroup
	cols   [numColumns]*columnReader // of the current row group
	left   int64                     // rows left in the current row group
	vals   []parquet.Value
	typed  typedBufs
	dec    decoder

	batch []auditfmt.Record // decoded rows; batch[pos:] not yet returned
	chain []hashchain.Pos   // the chain positions of the rows of batch
	mode  readMode
	errs  []error // the error of each row of batch, or nil
	pos   int
	row   int64 // index in the file of batch[pos]
	err   error // sticky: I/O and format errors end the file
	span  bool  // reading a span of one row group (readSpan): its end is the end
}

// OpenFile opens the Parquet file path and checks that it has the columns
// of a dataset file, with their types; the error for a file that does not
// is a *ColumnError. Columns the reader does not know are ignored.
func OpenFile(path string) (*FileReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := openFile(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func openFile(path string, f *os.File) (_ *FileReader, err error) {
	defer recoverCorrupt(path, &err)
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%s: not a Parquet file: %w", path, err)
	}
	if err := checkFooter(path, pf.Metadata(), st.Size()); err != nil {
		return nil, err
	}
	index, err := matchColumns(path, pf.Schema())
	if err != nil {
		return nil, err
	}
	if v, ok := pf.Lookup(MetaSchemaVersion); ok && v != strconv.Itoa(auditfmt.SchemaVersion) {
		return nil, fmt.Errorf("%s: %s: expected %d, found %q", path, MetaSchemaVersion, auditfmt.SchemaVersion, v)
	}
	var sources []string
	if v, ok := pf.Lookup(MetaSources); ok {
		if err := json.Unmarshal([]byte(v), &sources); err != nil {
			return nil, fmt.Errorf("%s: %s: expected a JSON array of strings: %w", path, MetaSources, err)
		}
	}
	r := &FileReader{
		path:   path,
		f:      f,
		pf:     pf,
		index:  index,
		groups: pf.RowGroups(),
		vals:   make([]parquet.Value, readBatch),
		typed:  newTypedBufs(),
		batch:  make([]auditfmt.Record, 0, readBatch),
		chain:  make([]hashchain.Pos, readBatch),
		errs:   make([]error, readBatch),
	}
	r.dec.sources.init(sources)
	at, _ := pf.Schema().Lookup(columnNames[colRecordedAt])
	r.dec.atScale = timeScale(at.Node.Type())
	return r, nil
}

// matchColumns finds our columns in schema and checks their types. It
// returns the leaf column index of each, -1 for the chain columns if the
// file has none of them.
func matchColumns(path string, schema *parquet.Schema) (index [numColumns]int, err error) {
	fields := make(map[string]parquet.Field, len(schema.Fields()))
	for _, f := range schema.Fields() {
		fields[f.Name()] = f
	}
	_, chained := fields[columnNames[colOrigin]]
	for c, name := range columnNames {
		want := columnTypes[c]
		f, ok := fields[name]
		if !ok && (isChainColumn(c) && !chained || mayLack(c)) {
			index[c] = -1
			continue
		}
		if !ok {
			return index, &ColumnError{File: path, Column: name, Expected: want.String()}
		}
		if found := want.check(f); found != "" {
			return index, &ColumnError{File: path, Column: name, Expected: want.String(), Found: found}
		}
		leaf, _ := schema.Lookup(name)
		index[c] = leaf.ColumnIndex
	}
	return index, nil
}

// Read reads up to len(recs) records and returns how many it read, or 0
// and io.EOF at the end of the file. Record.Source indexes Sources() and
// Record.Line is the line stored in the row.
//
// A row that does not decode to a valid record (an outcome outside the
// vocabulary, a null in a required column, a negative attempt) gives a
// *RowError naming the file, the row and the field, after the n records
// before it. It is not fatal: the next Read continues with the row after
// it. Any other error is returned again by every later Read.
func (r *FileReader) Read(recs []auditfmt.Record) (n int, err error) {
	if r.mode == readUndecided {
		r.mode = readRecords
	}
	return r.read(recs, nil)
}

// ReadChain is Read that also returns the chain position of each record in
// pos[i] (zero where the row's chain columns are null). It reads at most
// min(len(recs), len(pos)) rows. A file without chain columns gives a
// *ColumnError. Read skips the chain columns, so once Read has been called
// ReadChain cannot be; after ReadChain, Read can.
func (r *FileReader) ReadChain(recs []auditfmt.Record, pos []hashchain.Pos) (n int, err error) {
	if r.index[colOrigin] < 0 {
		return 0, &ColumnError{File: r.path, Column: columnNames[colOrigin], Expected: columnTypes[colOrigin].String()}
	}
	if r.mode == readRecords {
		return 0, fmt.Errorf("%s: ReadChain after Read", r.path)
	}
	r.mode = readChained
	k := min(len(recs), len(pos))
	return r.read(recs[:k], pos[:k])
}

// read reads into recs and, if pos is not nil, pos.
func (r *FileReader) read(recs []auditfmt.Record, pos []hashchain.Pos) (n int, err error) {
	defer recoverCorrupt(r.path, &err)
	for n < len(recs) {
		if r.pos == len(r.batch) {
			if err := r.fill(); err != nil {
				if err == io.EOF && n > 0 {
					err = nil
				}
				return n, err
			}
		}
		k := 0
		for r.pos+k < len(r.batch) && n+k < len(recs) && r.errs[r.pos+k] == nil {
			k++
		}
		copy(recs[n:n+k], r.batch[r.pos:r.pos+k])
		if pos != nil {
			copy(pos[n:n+k], r.chain[r.pos:r.pos+k])
		}
		n += k
		r.pos += k
		r.row += int64(k)
		if r.pos < len(r.batch) && r.errs[r.pos] != nil {
			err := &RowError{File: r.path, Row: r.row, Err: r.errs[r.pos]}
			r.pos++
			r.row++
			return n, err
		}
	}
	return n, nil
}

// fill decodes the next batch of rows.
func (r *FileReader) fill() error {
	if r.err != nil {
		return r.err
	}
	for r.left == 0 {
		if err := r.nextGroup(); err != nil {
			r.err = err
			return err
		}
	}
	n := int(min(r.left, readBatch))
	r.batch, r.pos = r.batch[:n], 0
	clear(r.batch)
	clear(r.chain[:n])
	clear(r.errs[:n])
	for c := range numColumns {
		if r.index[c] < 0 || isChainColumn(c) && r.mode != readChained {
			continue
		}
		if err := r.fillColumn(c); err != nil {
			r.err = fmt.Errorf("%s: row %d: %s: %w", r.path, r.row, columnNames[c], err)
			return r.err
		}
	}
	for i := range r.batch {
		if r.errs[i] == nil {
			r.errs[i] = r.batch[i].Validate()
		}
	}
	r.left -= int64(n)
	return nil
}

// fillColumn decodes the values of column c for the rows of the batch. It
// decodes what each read returns before reading again, since a value may
// point into a page that the next read releases.
func (r *FileReader) fillColumn(c int) error {
	for done := 0; done < len(r.batch); {
		if k, ok, err := r.fillTyped(c, done); ok || err != nil {
			if err != nil {
				return err
			}
			done += k
			continue
		}
		k, null, err := r.cols[c].read(r.vals[:len(r.batch)-done])
		if null && (columnTypes[c].required || isChainColumn(c)) {
			clear(r.vals[:k]) // null Values, for decodeColumn to refuse
			null = false
		}
		if !null { // null rows of an optional column are what fill cleared
			r.dec.decodeColumn(c, r.batch[done:done+k], r.chain[done:done+k], r.errs[done:done+k], r.vals[:k])
		}
		done += k
		switch {
		case err == io.EOF && done < len(r.batch):
			return fmt.Errorf("the column ends %d rows early", len(r.batch)-done)
		case err != nil && err != io.EOF:
			return err
		case k == 0 && err == nil:
			return io.ErrNoProgress
		}
	}
	return nil
}

// nextGroup opens the column readers of the next row group, or returns
// io.EOF after the last.
func (r *FileReader) nextGroup() error {
	if err := r.closeColumns(); err != nil {
		return fmt.Errorf("%s: %w", r.path, err)
	}
	if len(r.groups) == 0 {
		if r.span {
			return io.EOF
		}
		if r.row != r.pf.NumRows() {
			return fmt.Errorf("%s: %d rows read, the file's metadata says %d", r.path, r.row, r.pf.NumRows())
		}
		return io.EOF
	}
	g := r.groups[0]
	r.groups = r.groups[1:]
	chunks := g.ColumnChunks()
	for c, i := range r.index {
		if i >= 0 && (!isChainColumn(c) || r.mode == readChained) {
			r.cols[c] = newColumnReader(chunks[i])
		}
	}
	r.left = g.NumRows()
	return nil
}

func (r *FileReader) closeColumns() error {
	var errs []error
	for c, cr := range r.cols {
		if cr != nil {
			errs = append(errs, cr.Close())
			r.cols[c] = nil
		}
	}
	return errors.Join(errs...)
}

// Sources returns the names of the sources that Record.Source indexes:
// those listed in the file's metadata, followed by any other name met in
// the source column so far. The list grows as rows are read; it must not
// be modified.
func (r *FileReader) Sources() []string {
	s := r.dec.sources.names
	return s[:len(s):len(s)]
}

// NumRows returns the number of rows in the file.
func (r *FileReader) NumRows() int64 { return r.pf.NumRows() }

// Close closes the file.
func (r *FileReader) Close() error {
	err := r.closeColumns()
	if r.f != nil {
		err = errors.Join(err, r.f.Close())
		r.f = nil
	}
	if r.err == nil {
		r.err = fmt.Errorf("%s: read after close", r.path)
	}
	r.batch, r.pos = r.batch[:0], 0
	return err
}
