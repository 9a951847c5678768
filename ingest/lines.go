package ingest

import (
	"bufio"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/internal/ordered"
)

const batchLines = 4096

// lineBatch is a run of consecutive NDJSON lines and, once decoded, their
// records and rejects.
type lineBatch struct {
	buf   []byte  // the lines back to back, without newlines
	ends  []int   // end offset of each line in buf
	long  []int64 // for each line, its full length when it was cut at MaxLineBytes, else 0
	first int64   // line number of the first line
	err   error   // a read error after the lines, ends the input

	recs    encoded
	rejects []reject

	// While the input streams (stream.go), the records are decoded into
	// list instead of recs, their strings the lines' own bytes; rows is
	// what of them the stream keeps, on its way to Parquet, and refs
	// counts the holders of the batch, the last of whom returns it to the
	// pool.
	list []auditfmt.Record
	rows rowBatch
	refs atomic.Int32
}

// hold adds a holder of b.
func (b *lineBatch) hold() { b.refs.Add(1) }

// release drops a holder of b, returning it to the pool after the last.
func (b *lineBatch) release() {
	if b.refs.Add(-1) == 0 {
		batchPool.Put(b)
	}
}

// reject is a line that did not decode.
type reject struct {
	source    uint32
	line      int64
	err       error
	raw       []byte
	rawLength int64 // the line's full length, when raw was cut short
}

// readLines splits r into batches of lines. A line longer than
// auditfmt.MaxLineBytes is cut there (and rejected later); the rest of it
// is read and counted, never taken for another line.
func readLines(r *bufio.Reader, out chan<- *lineBatch, pool *sync.Pool, stop <-chan struct{}) {
	defer close(out)
	if start, _ := r.Peek(len(utf8BOM)); string(start) == utf8BOM {
		r.Discard(len(utf8BOM)) // a byte order mark begins the file, not its first record
	}
	line := int64(1)
	for {
		b := pool.Get().(*lineBatch)
		b.buf, b.ends, b.long, b.first, b.err = b.buf[:0], b.ends[:0], b.long[:0], line, nil
		for len(b.ends) < batchLines && len(b.buf) < batchBytes && b.err == nil {
			s, full, err := readLine(r)
			if err == io.EOF && len(s) == 0 && full == 0 {
				b.err = io.EOF
				break
			}
			b.buf = append(b.buf, s...)
			b.ends = append(b.ends, len(b.buf))
			b.long = append(b.long, full)
			line++
			if err != nil {
				b.err = err
			}
		}
		select {
		case out <- b:
		case <-stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// utf8BOM is the UTF-8 byte order mark some Windows tools write at the
// start of a text file.
const utf8BOM = "\xef\xbb\xbf"

// batchBytes bounds the bytes of one batch, so that long lines do not
// make batches of gigabytes.
const batchBytes = 4 << 20

// readLine returns the next line without its newline. full is the line's
// length when it was longer than auditfmt.MaxLineBytes and s holds only
// its start; otherwise 0.
func readLine(r *bufio.Reader) (s []byte, full int64, err error) {
	s, err = r.ReadSlice('\n')
	if err == nil {
		return s[:len(s)-1], 0, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return s, 0, err
	}
	keep := append([]byte(nil), s...)
	full = int64(len(s))
	for errors.Is(err, bufio.ErrBufferFull) {
		s, err = r.ReadSlice('\n')
		full += int64(len(s))
		if len(keep) <= auditfmt.MaxLineBytes {
			keep = append(keep, s...)
		}
	}
	if err == nil {
		full--
	}
	if int64(len(keep)) > full {
		keep = keep[:full]
	}
	if full <= auditfmt.MaxLineBytes || full == auditfmt.MaxLineBytes+1 && keep[full-1] == '\r' {
		return keep, 0, err // it fitted after all (a CRLF line's \r does not count)
	}
	return keep[:auditfmt.MaxLineBytes], full, err
}

// decodeBatches decodes and hashes batches from in, the lines of the input
// source named name, on all cores, and passes them on to out in input
// order. It closes out. While asList (if not nil) is true, the records go
// to each batch's list, else to its recs.
func decodeBatches(source uint32, name string, validateOnly bool, asList *atomic.Bool, in <-chan *lineBatch, out chan<- *lineBatch) {
	n := runtime.GOMAXPROCS(0)
	decoders, hashers := make([]auditfmt.Decoder, n), make([]hasher, n)
	for i := range decoders {
		decoders[i].Borrow = true // the batch keeps its lines until b.recs holds copies, or its list is written
	}
	for i := range hashers {
		hashers[i].validateOnly = validateOnly
	}
	ordered.Run(n, in, out, func(w int, b *lineBatch) {
		b.decode(&decoders[w], &hashers[w], source, name, asList != nil && asList.Load())
	})
}

// decode decodes the batch's lines and encodes the records for the sort
// or, asList, keeps them in b.list. A record must have canonical bytes
// (docs/hashchain.md): one whose numbers RFC 8785 cannot write exactly is
// rejected here, where the line is still at hand.
func (b *lineBatch) decode(d *auditfmt.Decoder, h *hasher, source uint32, name string, asList bool) {
	b.recs.reset()
	b.list = b.list[:0]
	b.rejects = b.rejects[:0]
	start := 0
	var e hashed
	for i, end := range b.ends {
		s := b.buf[start:end]
		start = end
		e = hashed{rec: auditfmt.Record{Source: source, Line: b.first + int64(i)}}
		var err error
		if b.long[i] > 0 {
			err = &auditfmt.FieldError{Expected: "a line of at most 1048576 bytes", Found: "a line of " + itoa(b.long[i]) + " bytes"}
		} else if err = d.Decode(s, &e.rec); err == nil {
			err = e.hash(h, name)
		}
		switch {
		case err == nil && asList:
			b.list = append(b.list, e.rec)
		case err == nil:
			b.recs.add(&e)
		default:
			b.rejects = append(b.rejects, reject{source: source, line: b.first + int64(i), err: err,
				raw: append([]byte(nil), s...), rawLength: b.long[i]})
		}
	}
}
