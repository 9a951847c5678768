package hashchain

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// WriterOptions configure a Writer.
type WriterOptions struct {
	// Log is the log's name, LOG: the checkpoint's origin line, and the
	// prefix of every chain's origin, LOG/CLIENT_ID. Required: non-empty
	// UTF-8 without control characters. A log keeps its name: reopening
	// it under another is an error.
	Log string
	// Signer, when set, signs every checkpoint (a C2SP signed note);
	// without one, the checkpoint file holds the bare checkpoint body. By
	// convention the key's name is Log.
	Signer note.Signer
}

// Position is where Append put a record.
type Position struct {
	Origin string    // its chain, LOG/CLIENT_ID
	Seq    int64     // its place in the chain, from 0
	Link   tlog.Hash // its chain link, link[Seq]
	Index  int64     // its 0-based line index in the log, and its leaf index in the tree
}

// ErrLocked is the error (wrapped, with the path and the holder's pid) of
// OpenWriter when another Writer holds the log.
var ErrLocked = errors.New("hashchain: log is locked by another writer")

// ErrClosed is returned by the methods of a closed Writer.
var ErrClosed = errors.New("hashchain: writer is closed")

// The pipeline's geometry: records per batch, and batches in flight. A
// Writer holds at most batchSize*batches records that Sync has not yet
// written.
const (
	batchSize = 1024
	batches   = 8
)

// An entry is one appended record on its way to the file.
type entry struct {
	rec   auditfmt.Record // a copy, Envelope cleared
	head  *Head           // for its origin and quoted origin only, which never change
	seq   int64
	link  tlog.Hash
	index int64
	line  []byte // the whole line when Append built it (the slow path); else nil
}

// A batch is a run of consecutive entries. The encoders turn it into lines
// and leaves; the file goroutine appends it to the tree and the file.
type batch struct {
	entries []entry
	buf     []byte      // the encoded lines
	leaves  []tlog.Hash // one per entry
	done    chan struct{}
	sync    chan syncResult // when set: after writing, fsync and reply
}

// syncResult is the reply to a sync: the tree the file now holds.
type syncResult struct {
	size int64
	root tlog.Hash
	err  error
}

// Writer appends records to a collector log (see OpenWriter). Its
// methods are safe for concurrent use; Appends are ordered by a mutex.
//
// A record's work is split so that Append returns everything it promises
// and no more: Append validates the record, computes R, its hash and the
// chain link (so Position is complete), and queues a copy. Encoding its
// line and hashing its tree leaf happen in GOMAXPROCS encoder
// goroutines, a batch of 1024 records at a time; one file goroutine then
// adds the batches' leaves to the tree and writes each batch with one
// write, in order. Sync, Checkpoint and Close wait for the queue to drain.
// At most 8 batches are in flight; when the background falls behind,
// Append waits.
type Writer struct {
	path   string
	log    string
	signer note.Signer
	file   *os.File
	lock   *os.File

	mu     sync.Mutex // guards what follows, and orders Appends
	closed bool
	chain  chainer
	cur    *batch // the batch being filled; nil until needed
	reply  chan syncResult

	free    chan *batch // batches ready to fill
	work    chan *batch // batches to encode, any order
	ordered chan *batch // batches to write, in order
	wg      sync.WaitGroup

	failed atomic.Bool // the file goroutine met an error; err holds it
	errMu  sync.Mutex
	err    error
}

// OpenWriter opens the collector log at path for appending, creating it
// when it does not exist. It first takes an exclusive lock, flock(2) on
// the log itself, without waiting: while a Writer holds the log,
// OpenWriter fails with ErrLocked, whatever path names the log (a
// symlink, a hard link). path + ".lock" holds the holder's pid for the
// message, and is never followed when it is a symlink.
//
// It then reads the whole log and verifies it as ReadLog does, and checks
// the checkpoint file's body (not its signature) against it, to rebuild
// the chain heads and the tree. A torn final record, a last line without
// its newline or a last line that is not a record, as a crash in the
// middle of a write leaves it, is cut off and reported in the returned
// *Recovery (nil when nothing was cut). Any other problem, a record that
// does not verify, or a torn record that the checkpoint covers, is an
// error (a *LogError names the line, origin and seq): the log is left as
// it is.
func OpenWriter(path string, opts WriterOptions) (*Writer, *Recovery, error) {
	if _, err := parseOrigin([]byte(opts.Log)); err != nil {
		return nil, nil, fmt.Errorf("hashchain: writer options: Log %q: expected non-empty UTF-8 without control characters", opts.Log)
	}
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, os.ErrNotExist)
	lock, err := lockLog(path) // creates the log when it does not exist
	if err != nil {
		return nil, nil, err
	}
	w := &Writer{path: path, log: opts.Log, signer: opts.Signer, lock: lock}
	tree, rec, err := w.open()
	if err != nil {
		if w.file != nil {
			w.file.Close()
		}
		if created { // leave no trace
			os.Remove(path)
		}
		os.Remove(path + ".lock") // held: nobody else writes it now
		lock.Close()
		return nil, nil, err
	}
	w.start(tree)
	return w, rec, nil
}

// open opens and verifies the log, recovers a torn tail, and sets up the
// chain heads.
func (w *Writer) open() (tree Tree, torn *Recovery, err error) {
	f, err := os.OpenFile(w.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return Tree{}, nil, fmt.Errorf("hashchain: open log: %w", err)
	}
	w.file = f
	var cp *Checkpoint
	snapAt := int64(-1)
	switch msg, err := os.ReadFile(w.path + checkpointSuffix); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return Tree{}, nil, fmt.Errorf("hashchain: read checkpoint: %w", err)
	default:
		c, _, _, err := readCheckpointFile(msg, nil)
		if err != nil {
			return Tree{}, nil, &LogError{Path: w.path + checkpointSuffix, Err: err}
		}
		if c.Origin != w.log {
			return Tree{}, nil, &LogError{Path: w.path + checkpointSuffix, Err: fmt.Errorf("the checkpoint is of the log %q, not %q", c.Origin, w.log)}
		}
		cp, snapAt = &c, c.Size
	}
	s := newLogState(w.path, w.log, snapAt)
	end, torn, err := s.scan(f, true)
	if err != nil {
		return Tree{}, nil, err
	}
	if err := s.checkCheckpoint(cp); err != nil {
		if torn != nil {
			err = fmt.Errorf("%w (and line %d is torn: %s)", err, torn.Line, torn.Reason)
		}
		return Tree{}, nil, err
	}
	if torn != nil {
		st, err := f.Stat()
		if err != nil {
			return Tree{}, nil, fmt.Errorf("hashchain: recover log: %w", err)
		}
		torn.Cut = st.Size() - end
		if err := f.Truncate(end); err != nil {
			return Tree{}, nil, fmt.Errorf("hashchain: recover log: cut the torn final record: %w", err)
		}
		if err := f.Sync(); err != nil {
			return Tree{}, nil, fmt.Errorf("hashchain: recover log: %w", err)
		}
	}
	if err := os.Remove(w.path + checkpointTmpSuffix); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Tree{}, nil, fmt.Errorf("hashchain: remove an unfinished checkpoint: %w", err)
	}
	if err := syncDir(w.path); err != nil { // its entry, when the lock created it
		return Tree{}, nil, err
	}
	if s.chains == nil { // an empty log
		s.chains = NewChains(w.log, false)
	}
	w.chain = chainer{chains: s.chains, next: s.records}
	return s.tree, torn, nil
}

// start starts the pipeline: GOMAXPROCS encoders and the file goroutine.
func (w *Writer) start(tree Tree) {
	w.reply = make(chan syncResult, 1)
	w.free = make(chan *batch, batches)
	w.work = make(chan *batch, batches)
	w.ordered = make(chan *batch, batches)
	for range batches {
		w.free <- &batch{
			entries: make([]entry, 0, batchSize),
			leaves:  make([]tlog.Hash, batchSize),
			done:    make(chan struct{}, 1),
		}
	}
	encoders := max(1, runtime.GOMAXPROCS(0))
	w.wg.Add(encoders + 1)
	for range encoders {
		go w.encoder()
	}
	go w.writeFile(tree)
}

// Append validates rec, chains it and queues it for writing, and returns
// its place in the log. rec is copied; its Envelope, Source and Line are
// not written (the log holds records as flat records).
//
// Append fails, and writes nothing, when rec.Validate fails or the record
// has no canonical bytes (see AppendRecordBytes), or when its line would
// not read back as the same record or would be longer than
// auditfmt.MaxLineBytes. It also returns the error of an earlier write
// that failed: after one the Writer writes no more (reopen the log to
// recover it).
//
// Append returns before the record reaches the file: encoding and writing
// happen in the background, in batches, and the record is durable only
// once Sync (or Checkpoint, or Close) returns. When the background falls
// behind, Append waits.
func (w *Writer) Append(rec *auditfmt.Record) (Position, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return Position{}, ErrClosed
	}
	if w.failed.Load() {
		return Position{}, w.writeErr()
	}
	if w.cur == nil {
		w.cur = <-w.free
	}
	b := w.cur
	k := len(b.entries)
	b.entries = b.entries[:k+1]
	pos, err := w.chain.add(&b.entries[k], rec)
	if err != nil {
		b.entries = b.entries[:k]
		return Position{}, fmt.Errorf("hashchain: append: %w", err)
	}
	if len(b.entries) == batchSize {
		w.submit()
	}
	return pos, nil
}

// A chainer chains records: it holds the heads of a log's chains and
// turns records into entries.
type chainer struct {
	chains *Chains
	next   int64 // the index of the next record
	rbuf   []byte
	lbuf   []byte           // the slow path's line
	xbuf   []byte           // the slow path's unknown members
	dec    auditfmt.Decoder // for the slow path's read-back check
	tmp    auditfmt.Record
}

// add validates rec, chains it and fills e with it. On error, nothing
// changes.
func (c *chainer) add(e *entry, rec *auditfmt.Record) (Position, error) {
	if err := rec.Validate(); err != nil {
		return Position{}, err
	}
	e.rec = *rec
	e.rec.Envelope = ""
	e.line = nil
	// -0 reads back as 0 (R holds both as 0): write 0.
	if e.rec.BackoffDelayS == 0 {
		e.rec.BackoffDelayS = 0
	}
	if e.rec.CeilingS == 0 {
		e.rec.CeilingS = 0
	}
	// R after a 0x00, to hash it in place: SHA-256(0x00 || R).
	zR, err := AppendRecordBytes(append(c.rbuf[:0], 0), &e.rec)
	if err != nil {
		return Position{}, err
	}
	c.rbuf = zR
	h := tlog.Hash(sha256.Sum256(zR))
	head, _ := c.chains.head(e.rec.ClientID)
	if slowPath(&e.rec, len(c.chains.log)) {
		if e.line, err = c.slowLine(&e.rec, head, NextLink(head.Link, h)); err != nil {
			return Position{}, err
		}
	}
	pos := c.chains.Append(e.rec.ClientID, h)
	e.head, e.seq, e.link, e.index = c.chains.cur, pos.Seq, pos.Link, c.next
	c.next++
	return Position{Origin: pos.Origin, Seq: pos.Seq, Link: pos.Link, Index: e.index}, nil
}

// encodeEntry appends e's line to dst, and returns it with e's leaf hash.
func encodeEntry(dst []byte, e *entry) (line []byte, leaf tlog.Hash) {
	if e.line != nil {
		dst = append(dst, e.line...)
	} else {
		dst = appendLinePrefix(dst, e.link, e.head.quotedOrigin(), e.seq)
		dst = append(e.rec.AppendJSON(dst), '}', '\n')
	}
	return dst, Leaf(Pos{Origin: e.head.Origin, Seq: e.seq, Link: e.link})
}

// maxPlainStrings bounds the bytes of a record's strings (and the log
// name) for which the fast path's line is certainly short enough: each
// byte takes at most six in JSON, and twice (the origin holds client_id).
const maxPlainStrings = 16 << 10

// The recorded_at times for which the fast path's line certainly reads
// back: the decoder reads the years 1678 to 2261 in the record's offset,
// and an offset moves the time by less than a day.
var (
	minPlainTime = time.Date(1679, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	maxPlainTime = time.Date(2261, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
)

// slowPath reports whether Append must build and check r's line itself:
// r has unknown members, whose text the line holds as written, strings
// long enough for the line to reach the decoder's limit, or a recorded_at
// near the ends of the years the decoder reads.
func slowPath(r *auditfmt.Record, logLen int) bool {
	return r.Extra != "" || logLen+len(r.ClientID)+len(r.HostID)+len(r.AttemptID)+len(r.RecordID) > maxPlainStrings ||
		r.RecordedAt < minPlainTime || r.RecordedAt >= maxPlainTime
}

// slowLine builds r's line and checks that it reads back as r: that it
// is not too long and that its unknown members, which it writes in their
// RFC 8785 form, decode as the same text. It returns the line, with its
// newline.
func (c *chainer) slowLine(r *auditfmt.Record, head *Head, link tlog.Hash) ([]byte, error) {
	if r.Extra != "" {
		var err error
		if c.xbuf, err = AppendCanonicalJSON(c.xbuf[:0], []byte(r.Extra)); err != nil {
			return nil, &auditfmt.FieldError{Field: "extra", Expected: "a JSON object", Found: err.Error()}
		}
		if string(c.xbuf) != r.Extra {
			r.Extra = string(c.xbuf)
		}
	}
	line := appendLinePrefix(c.lbuf[:0], link, head.quotedOrigin(), head.Next)
	start := len(line)
	line = append(r.AppendJSON(line), '}')
	c.lbuf = line
	if len(line) > maxLogLine {
		return nil, &auditfmt.FieldError{Expected: fmt.Sprintf("a record whose log line is at most %d bytes", maxLogLine), Found: fmt.Sprintf("a line of %d bytes", len(line))}
	}
	if err := c.dec.Decode(line, &c.tmp); err != nil {
		return nil, fmt.Errorf("the record's log line does not read back: %w", err)
	}
	c.tmp.Envelope = ""
	if again := c.tmp.AppendJSON(c.rbuf[:0]); string(again) != string(line[start:len(line)-1]) {
		return nil, errors.New("the record's log line does not read back as the same record")
	}
	return append(append(make([]byte, 0, len(line)+1), line...), '\n'), nil
}

// submit sends the current batch down the pipeline.
func (w *Writer) submit() {
	b := w.cur
	w.cur = nil
	w.ordered <- b // never blocks: the channels hold every batch there is
	w.work <- b
}

// encoder turns batches into lines and leaves.
func (w *Writer) encoder() {
	defer w.wg.Done()
	for b := range w.work {
		b.buf = b.buf[:0]
		for k := range b.entries {
			b.buf, b.leaves[k] = encodeEntry(b.buf, &b.entries[k])
		}
		b.done <- struct{}{}
	}
}

// writeFile appends encoded batches to the tree and the file, in order,
// and answers syncs.
func (w *Writer) writeFile(tree Tree) {
	defer w.wg.Done()
	for b := range w.ordered {
		<-b.done
		if !w.failed.Load() && len(b.entries) > 0 {
			for _, leaf := range b.leaves[:len(b.entries)] {
				tree.Append(leaf)
			}
			if _, err := w.file.Write(b.buf); err != nil {
				w.fail(fmt.Errorf("hashchain: write log: %w", err))
			}
		}
		if b.sync != nil {
			if !w.failed.Load() {
				if err := w.file.Sync(); err != nil {
					w.fail(fmt.Errorf("hashchain: sync log: %w", err))
				}
			}
			b.sync <- syncResult{size: tree.Size(), root: tree.Root(), err: w.writeErr()}
			b.sync = nil
		}
		clear(b.entries) // let the records' strings go
		b.entries = b.entries[:0]
		w.free <- b
	}
}

// fail records the first error of the file goroutine.
func (w *Writer) fail(err error) {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	if w.err == nil {
		w.err = fmt.Errorf("%w (the writer stopped; reopen the log to recover it)", err)
	}
	w.failed.Store(true)
}

func (w *Writer) writeErr() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.err
}

// Sync writes every record appended so far and fsyncs the log: when it
// returns without error, they are durable.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.sync()
	return err
}

// sync is Sync with w.mu held; it returns the tree the file holds.
func (w *Writer) sync() (syncResult, error) {
	if w.closed {
		return syncResult{}, ErrClosed
	}
	if w.cur == nil {
		w.cur = <-w.free
	}
	w.cur.sync = w.reply
	w.submit()
	r := <-w.reply
	return r, r.err
}

// Checkpoint seals the log: it syncs the log (see Sync), and only then
// signs a checkpoint of the tree of every record appended so far (with
// WriterOptions.Signer; without one it writes the bare checkpoint body),
// writes it to path + ".checkpoint.tmp", fsyncs that, renames it over
// path + ".checkpoint" and fsyncs the directory. A checkpoint never
// covers a record that is not durable, and the checkpoint file is always
// a whole checkpoint, the old one or the new.
func (w *Writer) Checkpoint() (Checkpoint, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, err := w.sync()
	if err != nil {
		return Checkpoint{}, err
	}
	c := Checkpoint{Origin: w.log, Size: r.size, Root: r.root}
	msg := c.Format()
	if w.signer != nil {
		if msg, err = SignCheckpoint(c, w.signer); err != nil {
			return Checkpoint{}, err
		}
	}
	if err := writeFileDurably(w.path+checkpointSuffix, w.path+checkpointTmpSuffix, msg); err != nil {
		return Checkpoint{}, fmt.Errorf("hashchain: write checkpoint: %w", err)
	}
	return c, nil
}

// Close syncs the log (see Sync), stops the Writer and releases the lock.
// It returns the first error it meets; the lock is released regardless.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	_, err := w.sync()
	w.closed = true
	close(w.work)
	close(w.ordered)
	w.wg.Wait()
	if cerr := w.file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("hashchain: close log: %w", cerr)
	}
	os.Remove(w.path + ".lock") // while the lock is held: the next writer writes its own
	if cerr := w.lock.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("hashchain: release lock: %w", cerr)
	}
	return err
}

// writeFileDurably replaces the file at path with data: it writes tmp,
// fsyncs it, renames it to path and fsyncs the directory.
func writeFileDurably(path, tmp string, data []byte) error {
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(path)
}

// syncDir fsyncs the directory that holds path, so that a file created or
// renamed in it stays.
func syncDir(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("hashchain: sync directory: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("hashchain: sync directory: %w", err)
	}
	return nil
}
