package ingest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
)

// A run is a temporary file of sorted records, written when the records of
// an ingest do not fit in memory and merged back afterwards. Its encoding is
// private to this package: each record is a 4-byte length followed by the
// fields in a fixed order (strings as uvarint length and bytes, integers as
// varints, floats as 8 little-endian bytes); an optional number is there
// only when the record's Has says so, an optional string only when a byte
// of bits before the strings says it is not empty.

// encoded is a sequence of records in run encoding, back to back, with
// the sort key of each. Until sorted, keys[i] is the key of record i.
type encoded struct {
	buf  []byte
	ends []int // the end of each record in buf
	keys []sortKey
}

// newEncoded returns an empty encoded with room for n records of size
// bytes in all.
func newEncoded(n, size int) *encoded {
	return &encoded{buf: make([]byte, 0, size), ends: make([]int, 0, n), keys: make([]sortKey, 0, n)}
}

func (b *encoded) len() int { return len(b.ends) }

func (b *encoded) reset() { b.buf, b.ends, b.keys = b.buf[:0], b.ends[:0], b.keys[:0] }

// add encodes e at the end of b.
func (b *encoded) add(e *hashed) {
	b.keys = append(b.keys, keyOf(&e.rec, len(b.ends)))
	b.buf = appendRun(b.buf, e)
	b.ends = append(b.ends, len(b.buf))
}

// start returns the offset of record i, at its length prefix.
func (b *encoded) start(i int) int {
	if i == 0 {
		return 0
	}
	return b.ends[i-1]
}

// record returns the encoding of record i without its length prefix, as
// decodeRun reads it.
func (b *encoded) record(i int) []byte { return b.buf[b.start(i)+4 : b.ends[i]] }

// setBuckets sets the bucket of the keys of records from on, of n
// buckets, from their client ids.
func (b *encoded) setBuckets(from, n int) {
	for k := from; k < len(b.keys); k++ {
		rec := b.record(int(b.keys[k].i))
		l, w := binary.Uvarint(rec) // the client id comes first
		b.keys[k].bucket = uint32(dataset.BucketBytes(rec[w:w+int(l)], n))
	}
}

// appendFrom appends records [from, to) of src, which is not sorted.
func (b *encoded) appendFrom(src *encoded, from, to int) {
	if from == to {
		return
	}
	base, n := len(b.buf)-src.start(from), len(b.ends)-from
	b.buf = append(b.buf, src.buf[src.start(from):src.ends[to-1]]...)
	for _, end := range src.ends[from:to] {
		b.ends = append(b.ends, end+base)
	}
	for _, k := range src.keys[from:to] {
		k.i += int32(n)
		b.keys = append(b.keys, k)
	}
}

func appendRun(dst []byte, e *hashed) []byte {
	r := &e.rec
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0) // room for a 4-byte length
	dst = appendString(dst, r.ClientID)
	dst = binary.AppendVarint(dst, r.RecordedAt)
	dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(r.BackoffDelayS))
	dst = binary.AppendVarint(dst, r.Attempt)
	dst = binary.AppendVarint(dst, int64(r.OffsetMin))
	var flags byte
	if r.CleanSession {
		flags |= 1
	}
	if r.SessionPresent {
		flags |= 2
	}
	dst = append(dst, byte(r.Outcome), flags, byte(r.Stage), byte(r.FailureClass))
	dst = binary.AppendUvarint(dst, uint64(r.Has))
	for i, v := range runInts(r) {
		if r.Has&runIntBits[i] != 0 {
			dst = binary.AppendVarint(dst, *v)
		}
	}
	if r.Has&auditfmt.HasCeiling != 0 {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(r.CeilingS))
	}
	var strs byte // which of the optional strings are there
	for i, v := range runStrings(r) {
		if *v != "" {
			strs |= 1 << i
		}
	}
	dst = append(dst, strs)
	for i, v := range runStrings(r) {
		if strs&(1<<i) != 0 {
			dst = appendString(dst, *v)
		}
	}
	dst = binary.AppendUvarint(dst, uint64(r.Source))
	dst = binary.AppendVarint(dst, r.Line)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// runInts are the optional integers of r in run encoding order, each
// written only when r.Has has its bit in runIntBits.
func runInts(r *auditfmt.Record) [9]*int64 {
	return [9]*int64{&r.Schema, &r.DeviceSeq, &r.ReasonCode, &r.OutboxDepth, &r.OutboxFlushed, &r.InboundRedelivered, &r.InboundDuplicates,
		&r.OutboxDropped, &r.InboundExpired}
}

var runIntBits = [9]auditfmt.Presence{auditfmt.HasSchema, auditfmt.HasDeviceSeq, auditfmt.HasReasonCode,
	auditfmt.HasOutboxDepth, auditfmt.HasOutboxFlushed, auditfmt.HasInboundRedelivered, auditfmt.HasInboundDuplicates,
	auditfmt.HasOutboxDropped, auditfmt.HasInboundExpired}

// runStrings are the optional strings of r in run encoding order, each
// written only when not empty, as a byte of bits before them says.
func runStrings(r *auditfmt.Record) [5]*string {
	return [5]*string{&r.HostID, &r.AttemptID, &r.RecordID, &r.Extra, &r.Envelope}
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// runDecoder reads back one record encoding. It reuses the previous
// record's client id when the bytes are equal, since runs are sorted by it.
type runDecoder struct {
	b   []byte
	err error
}

func (d *runDecoder) varint() int64 {
	if len(d.b) > 0 && d.b[0] < 0x80 { // one byte: most fields are small or absent
		x := d.b[0]
		d.b = d.b[1:]
		return int64(x>>1) ^ -int64(x&1)
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *runDecoder) uvarint() uint64 {
	if len(d.b) > 0 && d.b[0] < 0x80 {
		x := d.b[0]
		d.b = d.b[1:]
		return uint64(x)
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *runDecoder) float() float64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *runDecoder) bytes() []byte {
	if len(d.b) > 0 && d.b[0] == 0 { // an absent string
		d.b = d.b[1:]
		return nil
	}
	n, k := binary.Uvarint(d.b)
	if k <= 0 || uint64(len(d.b)-k) < n {
		d.fail()
		return nil
	}
	s := d.b[k : k+int(n)]
	d.b = d.b[k+int(n):]
	return s
}

func (d *runDecoder) string() string { return string(d.bytes()) }

func (d *runDecoder) fail() {
	if d.err == nil {
		d.err = errors.New("corrupt run record")
	}
	d.b = nil
}

func decodeRun(b []byte, e *hashed, prevClient string) error {
	r := &e.rec
	d := runDecoder{b: b}
	if id := d.bytes(); string(id) == prevClient {
		r.ClientID = prevClient
	} else {
		r.ClientID = string(id)
	}
	r.RecordedAt = d.varint()
	r.BackoffDelayS = d.float()
	r.Attempt = d.varint()
	r.OffsetMin = int16(d.varint())
	if len(d.b) < 4 {
		d.fail()
		return d.err
	}
	r.Outcome, r.CleanSession, r.SessionPresent = auditfmt.Outcome(d.b[0]), d.b[1]&1 != 0, d.b[1]&2 != 0
	r.Stage, r.FailureClass = auditfmt.Stage(d.b[2]), auditfmt.FailureClass(d.b[3])
	d.b = d.b[4:]
	r.Has = auditfmt.Presence(d.uvarint())
	for i, v := range runInts(r) {
		*v = 0
		if r.Has&runIntBits[i] != 0 {
			*v = d.varint()
		}
	}
	r.CeilingS = 0
	if r.Has&auditfmt.HasCeiling != 0 {
		r.CeilingS = d.float()
	}
	var strs byte
	if len(d.b) > 0 {
		strs, d.b = d.b[0], d.b[1:]
	} else {
		d.fail()
	}
	for i, v := range runStrings(r) {
		*v = ""
		if strs&(1<<i) != 0 {
			*v = d.string()
		}
	}
	r.Source = uint32(d.uvarint())
	r.Line = d.varint()
	if len(d.b) != 0 {
		d.fail()
	}
	return d.err
}

// runFile is a run on disk and its marks: the key and offset of every
// markEvery-th record, where a merge of a range of keys starts reading.
type runFile struct {
	path  string
	marks []runMark
}

type runMark struct {
	key splitKey
	off int64
}

// markEvery is how many records of a run lie between two marks.
const markEvery = 1024

// writeRun writes the records of b in the order of its keys to a
// temporary run file.
func writeRun(dir string, b *encoded) (run runFile, err error) {
	f, err := os.CreateTemp(dir, "stormaudit-run-*")
	if err != nil {
		return run, fmt.Errorf("spill: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	var off int64
	for n, k := range b.keys {
		rec := b.buf[b.start(int(k.i)):b.ends[k.i]]
		if n%markEvery == 0 {
			run.marks = append(run.marks, runMark{key: b.keyAt(n), off: off})
		}
		if _, err := w.Write(rec); err != nil {
			return run, fmt.Errorf("spill: %w", err)
		}
		off += int64(len(rec))
	}
	if err := w.Flush(); err != nil {
		return run, fmt.Errorf("spill: %w", err)
	}
	run.path = f.Name()
	return run, f.Close()
}

// runReader streams the records of one run file.
type runReader struct {
	f    *os.File
	r    *bufio.Reader
	buf  []byte
	prev string
}

// openRun opens a run for reading from its last mark below lo (from its
// start if lo is nil), with a buffer of bufSize bytes.
func openRun(run runFile, lo *splitKey, bufSize int) (*runReader, error) {
	f, err := os.Open(run.path)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	if lo != nil {
		// the last mark below lo: every record before it is below lo too
		i, _ := slices.BinarySearchFunc(run.marks, *lo, func(m runMark, lo splitKey) int { return m.key.compareKey(lo) })
		if i > 0 {
			if _, err := f.Seek(run.marks[i-1].off, io.SeekStart); err != nil {
				f.Close()
				return nil, fmt.Errorf("spill: %w", err)
			}
		}
	}
	return &runReader{f: f, r: bufio.NewReaderSize(f, bufSize)}, nil
}

// readBufSize is the read buffer of each of n runs: 256 KiB, less when
// there are so many runs that the buffers would pass 16 MiB.
func readBufSize(n int) int { return max(16<<10, min(256<<10, (16<<20)/max(n, 1))) }

// next decodes the next record into e; io.EOF at the end.
func (rr *runReader) next(e *hashed) error {
	var hdr [4]byte
	if _, err := io.ReadFull(rr.r, hdr[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return fmt.Errorf("spill %s: truncated", rr.f.Name())
		}
		return err
	}
	n := int(binary.LittleEndian.Uint32(hdr[:]))
	if cap(rr.buf) < n {
		rr.buf = make([]byte, n)
	}
	rr.buf = rr.buf[:n]
	if _, err := io.ReadFull(rr.r, rr.buf); err != nil {
		return fmt.Errorf("spill %s: %w", rr.f.Name(), err)
	}
	if err := decodeRun(rr.buf, e, rr.prev); err != nil {
		return fmt.Errorf("spill %s: %w", rr.f.Name(), err)
	}
	rr.prev = e.rec.ClientID
	return nil
}

// close closes the run; the file stays until the sorter removes it.
func (rr *runReader) close() error { return rr.f.Close() }
