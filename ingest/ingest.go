package ingest

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/stormaudit/stormaudit/dataset"

	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// Options configures Run and Scan. The zero value of each field selects
// its default.
type Options struct {
	// ChunkRecords is how many records are sorted in memory before they
	// are spilled to a run file in the output directory (default 1<<18).
	// Memory use is bounded by about two chunks.
	ChunkRecords int
	// FileRows is the number of rows after which a new Parquet file is
	// started, at the next change of client_id (default 1<<22).
	FileRows int64
	// Buckets, when above 1, partitions the dataset by client id into
	// that many buckets (dataset.Bucket), Hive-style: the files of bucket
	// b are in the directory dataset.BucketDir(b, Buckets), every device in
	// one bucket, the buckets in order. At most dataset.MaxBuckets.
	Buckets int
	// Progress, when set, is called about every 200ms while inputs are
	// read, and once at the end of each phase.
	Progress func(Progress)
	// CreatedBy names the program in the manifest.
	CreatedBy string
	// Log names the log: the checkpoint's origin line and the prefix of
	// every chain's origin. It must name this dataset alone, as a
	// transparency log's origin does: by default it is "stormaudit/", the
	// dataset directory's base name, "/" and the dataset's random id
	// (dataset.Manifest.DatasetID), so that no two datasets share it.
	Log string
	// Strict makes the first rejected line an error: the ingest stops
	// and writes no dataset.
	Strict bool
	// MaxRejects is how many lines may be rejected before the ingest
	// gives up (DefaultMaxRejects if 0; no limit if negative): a file of
	// another format, or a hostile one, would otherwise fill the disk with
	// rejects.ndjson.
	MaxRejects int64
	// Notify, when set, hears what the ingest did besides its job: the
	// leftovers of killed ingests it removed.
	Notify func(string)
	// Signer, when set, signs the checkpoint.
	Signer note.Signer
	// BrokerLogs are the broker's own logs to store with the dataset,
	// byte for byte under dataset.BrokerDir, listed in the manifest with
	// their digests and accounting: the second witness, covered by the
	// manifest and its signature, and checked by verify.
	BrokerLogs []BrokerSource
	// Partitions is the most ranges of client ids whose records are
	// merged, linked and written in parallel, each to files of its own
	// (default GOMAXPROCS). A partition has at least 262,144 records.
	Partitions int
	// partitionRows replaces that least number of records, in tests.
	partitionRows int64
	// noStream makes every ingest sort, as input out of order does
	// (stream.go), and streamEnded hears how many records a stream had
	// kept when a record out of order ended it: in tests.
	noStream    bool
	streamEnded func(kept int64)
	// Verifiers check the signed checkpoints of collector logs given as
	// inputs. Without them a collector log's chains and tree are still
	// verified, and its signature is reported unchecked.
	Verifiers note.Verifiers
}

// Progress reports how far an ingest has come.
type Progress struct {
	Phase      string // "read" or "write"
	BytesRead  int64  // raw bytes read from all inputs so far
	TotalBytes int64  // the inputs' total size, or -1 when not known (stdin)
	Records    int64  // records decoded or written so far
}

// DefaultMaxRejects is Options.MaxRejects when it is 0.
const DefaultMaxRejects = 100_000

// Run reads every source, validates and de-duplicates the records, and
// writes them as a dataset to dir, which must not exist or be empty. It
// builds the dataset in a stage beside dir and renames it into place once
// complete, so dir is either a whole dataset or left as it was.
// Rejected lines go to rejects.ndjson, duplicate lines to
// duplicates.ndjson; the manifest accounts for every line read. Run
// returns an error only when it could not do its job (usage, I/O, an
// unreadable input); rejects are not errors.
func Run(ctx context.Context, dir string, sources []Source, opts Options) (*dataset.Manifest, error) {
	opts.setDefaults()
	id, err := newDatasetID()
	if err != nil {
		return nil, err
	}
	if opts.Log == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		opts.Log = "stormaudit/" + filepath.Base(abs) + "/" + id
	}
	if err := hashchain.CheckLogName(opts.Log); err != nil {
		return nil, err
	}
	if opts.Buckets < 0 || opts.Buckets > dataset.MaxBuckets {
		return nil, fmt.Errorf("buckets: expected 0 to %d, found %d", dataset.MaxBuckets, opts.Buckets)
	}
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		// the dataset goes where the link points, which stays a link: the
		// rename that puts the dataset in place would replace the link
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: a symlink that names nothing: %w", dir, err)
		}
		dir = real
	}
	if err := checkOutputDir(dir); err != nil {
		return nil, err
	}
	st, removed, err := newStage(dir)
	for _, r := range removed {
		if opts.Notify != nil {
			opts.Notify(fmt.Sprintf("removed %s, the leftovers of an ingest into %s that was killed", r, dir))
		}
	}
	if err != nil {
		return nil, err
	}
	ing := &ingest{ctx: ctx, dir: st.dir, id: id, opts: opts, sort: newSorter(st.dir, opts.ChunkRecords)}
	if opts.Buckets > 1 {
		ing.sort.buckets = opts.Buckets
	}
	m, err := ing.run(sources)
	if err == nil {
		err = st.commit(dir)
	}
	if err != nil {
		// the output stays as it was: a dataset is all there or not there
		ing.sort.discard()
		st.discard()
		return nil, err
	}
	return m, nil
}

// newDatasetID returns a new dataset's id: 128 random bits in hex.
func newDatasetID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// setDefaults fills in the options left zero.
func (o *Options) setDefaults() {
	if o.ChunkRecords <= 0 {
		o.ChunkRecords = 1 << 18
	}
	if o.FileRows <= 0 {
		o.FileRows = 1 << 22
	}
	if o.Partitions <= 0 {
		o.Partitions = runtime.GOMAXPROCS(0)
	}
	if o.partitionRows <= 0 {
		o.partitionRows = partitionRows
	}
	if o.MaxRejects == 0 {
		o.MaxRejects = DefaultMaxRejects
	}
}

func (ing *ingest) run(sources []Source) (*dataset.Manifest, error) {
	defer ing.abortStream()
	if err := ing.read(sources); err != nil {
		return nil, err
	}
	return ing.write()
}

// read reads every source into the sort, quarantining rejected lines in
// the directory's rejects.ndjson: what Run and Scan share.
func (ing *ingest) read(sources []Source) error {
	ing.total = totalSize(sources)
	for _, s := range sources {
		ing.allNames = append(ing.allNames, s.Name)
	}
	rejects, err := newQuarantine(filepath.Join(ing.dir, dataset.RejectsName))
	if err != nil {
		return err
	}
	ing.rejects = rejects
	if ing.streams() {
		if err := ing.startStream(); err != nil {
			rejects.close()
			return err
		}
	}
	err = ing.readAll(sources)
	if cerr := rejects.close(); err == nil {
		err = cerr
	}
	return err
}

type ingest struct {
	ctx     context.Context
	dir     string // the stage the dataset is built in
	id      string // the dataset's id
	opts    Options
	sort    *sorter
	rejects *quarantine
	inputs  []dataset.Input
	names   []string
	bytes   atomic.Int64
	total   int64
	records int64
	mu      sync.Mutex // guards written, records and last while partitions write
	written int64
	last    time.Time
	scan    bool // Scan: no hashes, chains or files

	allNames []string    // the sources' names, known from the start
	inOrder  *stream     // the stream, while the input is in order (stream.go)
	listing  atomic.Bool // the decoders decode into lists, for the stream
}

// checkOutputDir checks that the output directory is new or empty.
func checkOutputDir(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(ents) > 0:
		return fmt.Errorf("%s: the output directory is not empty; expected a new or empty directory", dir)
	}
	return nil
}

func totalSize(sources []Source) int64 {
	var total int64
	for _, s := range sources {
		st, err := os.Stat(s.Name)
		if s.Name == "-" || s.Reader != nil || err != nil || !st.Mode().IsRegular() {
			return -1
		}
		total += st.Size()
	}
	return total
}

func (ing *ingest) readAll(sources []Source) error {
	for i, src := range sources {
		if err := ing.ctx.Err(); err != nil {
			return err
		}
		in, err := openInput(ing.ctx, src, &ing.bytes)
		if err != nil {
			return err
		}
		ing.names = append(ing.names, src.Name)
		ing.inputs = append(ing.inputs, dataset.Input{Name: src.Name, Format: in.format, Gzip: in.gzip})
		if in.format == FormatNDJSON && isCollectorLog(in.r) {
			if in.path == "" {
				in.close()
				return fmt.Errorf("%s: a collector log must be given as a plain file, with its checkpoint file beside it, so that it can be verified before it is ingested", src.Name)
			}
			if ing.inputs[i].Collector, err = verifyCollectorLog(in.path, ing.opts.Verifiers); err != nil {
				in.close()
				return fmt.Errorf("%s: %w", src.Name, err)
			}
		}
		err = ing.readInput(uint32(i), in)
		if err == nil {
			err = in.drain()
		}
		in.close()
		if cerr := ing.ctx.Err(); err != nil && cerr != nil {
			return cerr // a read ended by closing the input
		}
		var le *auditfmt.LineError
		if errors.As(err, &le) {
			return err // it names the input
		}
		if err != nil {
			return fmt.Errorf("%s: %w", src.Name, err)
		}
		ing.inputs[i].Bytes, ing.inputs[i].SHA256 = in.raw.n, in.raw.sum()
	}
	ing.progress("read", true)
	return nil
}

func (ing *ingest) readInput(source uint32, in *opened) error {
	switch in.format {
	case FormatCSV:
		return ing.readCSV(source, in)
	case FormatParquet:
		return ing.readParquet(source, in)
	}
	return ing.readNDJSON(source, in)
}

// batchPool holds line batches, each with room for the lines of a
// typical batch, so that a new one does not grow its buffer by copying.
var batchPool = sync.Pool{New: func() any { return &lineBatch{buf: make([]byte, 0, 1<<20)} }}

func (ing *ingest) readNDJSON(source uint32, in *opened) error {
	lines := make(chan *lineBatch, 4)
	decoded := make(chan *lineBatch, 8)
	stop := make(chan struct{})
	go readLines(in.r, lines, &batchPool, stop)
	go decodeBatches(source, ing.names[source], true, &ing.listing, lines, decoded) // version 3 links in order: decoding only validates
	var err error
	for b := range decoded {
		b.refs.Store(1)
		readErr := b.err
		if err == nil {
			err = ing.acceptBatch(source, b)
		}
		if err == nil && readErr != nil && readErr != io.EOF {
			err = readErr
		}
		if err != nil && stop != nil {
			close(stop) // the reader stops at its next batch; drain what is in flight
			stop = nil
		}
		b.release()
	}
	return err
}

// acceptBatch accepts the records of a decoded batch: to the stream while
// it lasts, else to the sort.
func (ing *ingest) acceptBatch(source uint32, b *lineBatch) error {
	if ing.inOrder == nil && len(b.list) > 0 {
		encodeList(b.list, &b.recs) // decoded before the stream ended
		b.list = b.list[:0]
	}
	if ing.inOrder == nil || len(b.list) == 0 {
		return ing.accept(source, int64(len(b.ends)), &b.recs, b.rejects)
	}
	if err := ing.count(source, int64(len(b.ends)), int64(len(b.list)), b.rejects); err != nil {
		return err
	}
	rest, err := ing.inOrder.add(b)
	if err == nil && rest != nil {
		var sorted encoded
		encodeList(rest, &sorted)
		if err = ing.endStream(); err == nil {
			err = ing.sort.add(&sorted)
		}
	}
	if err != nil {
		return err
	}
	ing.progress("read", false)
	return ing.ctx.Err()
}

// accept counts lines and passes records to the sorter and rejects to
// the quarantine. Records that come so end the stream, if it lasts.
func (ing *ingest) accept(source uint32, lines int64, recs *encoded, rejects []reject) error {
	if err := ing.count(source, lines, int64(recs.len()), rejects); err != nil {
		return err
	}
	if ing.inOrder != nil && recs.len() > 0 {
		if err := ing.endStream(); err != nil {
			return err
		}
	}
	if err := ing.sort.add(recs); err != nil {
		return err
	}
	ing.progress("read", false)
	return ing.ctx.Err()
}

// count counts lines and records and passes rejects to the quarantine.
func (ing *ingest) count(source uint32, lines, records int64, rejects []reject) error {
	c := &ing.inputs[source].Counts
	c.Lines += lines
	c.Rejected += int64(len(rejects))
	ing.records += records
	for i := range rejects {
		r := &rejects[i]
		if ing.opts.Strict {
			return &StrictError{&auditfmt.LineError{File: ing.names[source], Line: r.line, Err: r.err}}
		}
		if err := ing.rejects.add(ing.names[source], r); err != nil {
			return err
		}
	}
	if n := ing.rejected(); ing.opts.MaxRejects > 0 && n > ing.opts.MaxRejects {
		return &TooManyRejectsError{Rejected: n, Lines: ing.lines(), Max: ing.opts.MaxRejects}
	}
	return nil
}

func (ing *ingest) readCSV(source uint32, in *opened) error {
	cr, err := auditfmt.NewCSVReader(in.r)
	if err != nil {
		return fmt.Errorf("line 1: %w", err)
	}
	var recs encoded
	var rejects []reject
	var rows int64
	h := hasher{validateOnly: true} // version 3 links in order: only validate
	for {
		var e hashed
		rec := &e.rec
		raw, err := cr.Next(rec)
		if err == io.EOF {
			return ing.accept(source, rows, &recs, rejects)
		}
		rec.Source = source
		if err == nil {
			err = e.hash(&h, ing.names[source])
		}
		var fe *auditfmt.FieldError
		switch {
		case err == nil:
			recs.add(&e)
		case errors.As(err, &fe):
			rejects = append(rejects, reject{source: source, line: rec.Line, err: err, raw: append([]byte(nil), raw...)})
		default:
			return err
		}
		rows++
		if recs.len() == batchLines || len(rejects) == batchLines {
			if err := ing.accept(source, rows, &recs, rejects); err != nil {
				return err
			}
			recs.reset()
			rejects, rows = rejects[:0], 0
		}
	}
}

func (ing *ingest) readParquet(source uint32, in *opened) error {
	path := in.path
	if path == "" {
		spooled, err := in.spool(ing.dir)
		if err != nil {
			return err
		}
		defer os.Remove(spooled)
		path = spooled
	}
	fr, err := dataset.OpenFile(path)
	if err != nil {
		return err
	}
	defer fr.Close()
	recs := make([]auditfmt.Record, batchLines)
	var enc encoded
	h := hasher{validateOnly: true} // version 3 links in order: only validate
	var row int64                   // rows are numbered from 1 as the input's lines
	for {
		n, err := fr.Read(recs)
		enc.reset()
		for i := range recs[:n] {
			row++
			e := hashed{rec: recs[i]}
			e.rec.Source, e.rec.Line = source, row
			if herr := e.hash(&h, ing.names[source]); herr != nil {
				return &auditfmt.LineError{File: ing.names[source], Line: row, Err: herr}
			}
			enc.add(&e)
		}
		var rejects []reject
		var re *dataset.RowError
		if errors.As(err, &re) { // a row that does not decode: quarantined, not fatal
			row++
			rejects = []reject{{source: source, line: row, err: re.Err}}
			err = nil
		}
		if aerr := ing.accept(source, int64(n+len(rejects)), &enc, rejects); aerr != nil {
			return aerr
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (ing *ingest) progress(phase string, final bool) {
	if ing.opts.Progress == nil {
		return
	}
	if now := time.Now(); final || now.Sub(ing.last) >= 200*time.Millisecond {
		ing.last = now
		ing.opts.Progress(Progress{Phase: phase, BytesRead: ing.bytes.Load(), TotalBytes: ing.total, Records: ing.records})
	}
}

// quarantine writes rejected lines verbatim, one JSON object each.
type quarantine struct {
	f *os.File
	w *bufio.Writer
}

func newQuarantine(path string) (*quarantine, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &quarantine{f: f, w: bufio.NewWriter(f)}, nil
}

// rejectEntry is one line of rejects.ndjson.
type rejectEntry struct {
	Source    string `json:"source"`
	Line      int64  `json:"line"`
	Field     string `json:"field,omitempty"`
	Error     string `json:"error"`
	Raw       string `json:"raw"`
	RawBase64 []byte `json:"raw_base64,omitempty"`
	RawLength int64  `json:"raw_length,omitempty"` // set when raw holds only the start of the line
	RawSHA256 string `json:"raw_sha256,omitempty"` // of what was read of the line (its first auditfmt.MaxLineBytes), when raw holds less
}

// MaxRejectRaw is how much of a rejected line rejects.ndjson keeps: the
// start of a longer line, with its length and SHA-256, so that the
// quarantine grows with the lines rejected, not with their bytes (300
// rejected lines of 2 MiB wrote 600 MB).
const MaxRejectRaw = 4096

func (q *quarantine) add(name string, r *reject) error {
	e := rejectEntry{Source: name, Line: r.line, Error: (&auditfmt.LineError{File: name, Line: r.line, Err: r.err}).Error(), RawLength: r.rawLength}
	var fe *auditfmt.FieldError
	if errors.As(r.err, &fe) {
		e.Field = fe.Field
	}
	raw := r.raw
	if len(raw) > MaxRejectRaw {
		sum := sha256.Sum256(raw)
		e.RawSHA256, e.RawLength = hex.EncodeToString(sum[:]), max(e.RawLength, int64(len(raw)))
		cut := MaxRejectRaw
		for cut > MaxRejectRaw-utf8.UTFMax && !utf8.RuneStart(raw[cut]) {
			cut-- // not inside a character
		}
		raw = raw[:cut]
	}
	if utf8.Valid(raw) {
		e.Raw = string(raw)
	} else {
		e.RawBase64 = raw
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	q.w.Write(b)
	return q.w.WriteByte('\n')
}

func (q *quarantine) close() error {
	err := q.w.Flush()
	if cerr := q.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// rejected and lines count the lines rejected and read so far.
func (ing *ingest) rejected() (n int64) {
	for i := range ing.inputs {
		n += ing.inputs[i].Rejected
	}
	return n
}

func (ing *ingest) lines() (n int64) {
	for i := range ing.inputs {
		n += ing.inputs[i].Lines
	}
	return n
}

// StrictError is the first rejected line of an ingest under
// Options.Strict.
type StrictError struct{ *auditfmt.LineError }

func (e *StrictError) Error() string { return "--strict: " + e.LineError.Error() }

// Unwrap returns the line's error.
func (e *StrictError) Unwrap() error { return e.LineError }

// TooManyRejectsError stops an ingest whose rejects passed
// Options.MaxRejects.
type TooManyRejectsError struct {
	Rejected, Lines, Max int64
}

func (e *TooManyRejectsError) Error() string {
	return fmt.Sprintf("%d of the %d lines read so far were rejected, more than the %d --max-rejects allows: stopped "+
		"(is the input in a format stormaudit reads? raise --max-rejects, or -1 for no limit, to go on)", e.Rejected, e.Lines, e.Max)
}
