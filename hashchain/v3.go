package hashchain

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/stormaudit/stormaudit/auditfmt"

	"golang.org/x/mod/sumdb/tlog"
)

// Version3 is version 3 of docs/hashchain.md: one hash per record, its
// link, over a binary canonical form B that a verifier builds from the
// columns, serving as its chain's link and, at a segment's end, as a tree
// leaf. Version is the version ingest writes.
const Version3 = 3

// SegmentLen is the length of a chain segment in version 3: the tree has a
// leaf for every SegmentLen-th record of a chain (seq SegmentLen-1,
// 2*SegmentLen-1, ...) and for its last.
const SegmentLen = 64

// genesis3Prefix starts the input of a version 3 chain's genesis.
const genesis3Prefix = "stormaudit/chain/v3\n"

// link3Prefix starts the input of a version 3 link, apart from RFC 6962's
// leaf (0x00) and node (0x01) prefixes.
const link3Prefix = 0x02

// Genesis3 returns link[-1] of the version 3 chain named origin:
// SHA-256("stormaudit/chain/v3\n" || origin || "\n").
func Genesis3(origin string) tlog.Hash {
	b := make([]byte, 0, len(genesis3Prefix)+len(origin)+1)
	b = append(b, genesis3Prefix...)
	b = append(b, origin...)
	return sha256.Sum256(append(b, '\n'))
}

// Link3 returns link[n] = SHA-256(0x02 || link[n-1] || B[n]), from a
// stack buffer for a typical record.
func Link3(prev tlog.Hash, b []byte) tlog.Hash {
	var buf [256]byte
	if 1+tlog.HashSize+len(b) <= len(buf) {
		buf[0] = link3Prefix
		copy(buf[1:], prev[:])
		n := copy(buf[1+tlog.HashSize:], b)
		return sha256.Sum256(buf[:1+tlog.HashSize+n])
	}
	h := sha256.New()
	h.Write([]byte{link3Prefix})
	h.Write(prev[:])
	h.Write(b)
	var sum tlog.Hash
	h.Sum(sum[:0])
	return sum
}

// IsLeaf3 reports whether the record at seq of a chain is a tree leaf in
// version 3: the last of a segment of SegmentLen records, or the last of
// its chain.
func IsLeaf3(seq int64, last bool) bool { return last || (seq+1)%SegmentLen == 0 }

// The flags of B: bit 0 clean_session, then one bit per optional field,
// in the order their values follow. The inbound fields came after the
// envelope's bit, and outbox_dropped and inbound_expired after theirs, so
// a record without them has the bytes it had before.
const (
	flagClean uint64 = 1 << iota
	flagSchema
	flagDeviceSeq
	flagReasonCode
	flagCeiling
	flagSessionPresent
	flagOutboxDepth
	flagOutboxFlushed
	flagHostID
	flagStage
	flagAttemptID
	flagRecordID
	flagFailureClass
	flagExtra
	flagEnvelope
	flagInboundRedelivered
	flagInboundDuplicates
	flagOutboxDropped
	flagInboundExpired
)

// AppendRecordBytes3 appends B, the version 3 canonical bytes of r at seq
// of its chain, read from source (docs/hashchain.md, "Version 3"):
//
//	str(client_id) uvarint(seq) i64(recorded_at, Unix ns) i16(offset, min)
//	uvarint(attempt) f64(backoff_delay_s) u8(outcome) uvarint(flags)
//	[the optional fields flags names, in flag order] str(source) uvarint(line)
//
// where str is uvarint(length) then the bytes, integers are big-endian,
// f64 is the IEEE 754 bits, and optional integers are uvarints of their
// 64-bit two's complement.
func AppendRecordBytes3(dst []byte, r *auditfmt.Record, seq int64, source string) []byte {
	dst = appendStr(dst, r.ClientID)
	dst = binary.AppendUvarint(dst, uint64(seq))
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.RecordedAt))
	dst = binary.BigEndian.AppendUint16(dst, uint16(r.OffsetMin))
	dst = binary.AppendUvarint(dst, uint64(r.Attempt))
	dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(r.BackoffDelayS))
	dst = append(dst, byte(r.Outcome))
	dst = binary.AppendUvarint(dst, flags3(r))
	if r.Has&auditfmt.HasSchema != 0 {
		dst = binary.AppendUvarint(dst, uint64(r.Schema))
	}
	if r.Has&auditfmt.HasDeviceSeq != 0 {
		dst = binary.AppendUvarint(dst, uint64(r.DeviceSeq))
	}
	if r.Has&auditfmt.HasReasonCode != 0 {
		dst = binary.AppendUvarint(dst, uint64(r.ReasonCode))
	}
	if r.Has&auditfmt.HasCeiling != 0 {
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(r.CeilingS))
	}
	if r.Has&auditfmt.HasSessionPresent != 0 {
		dst = append(dst, b2u(r.SessionPresent))
	}
	if r.Has&auditfmt.HasOutboxDepth != 0 {
		dst = binary.AppendUvarint(dst, uint64(r.OutboxDepth))
	}
	if r.Has&auditfmt.HasOutboxFlushed != 0 {
		dst = binary.AppendUvarint(dst, uint64(r.OutboxFlushed))
	}
	if r.HostID != "" {
		dst = appendStr(dst, r.HostID)
	}
	if r.Stage != 0 {
		dst = append(dst, byte(r.Stage))
	}
	if r.AttemptID != "" {
		dst = appendStr(dst, r.AttemptID)
	}
	if r.RecordID != "" {
		dst = appendStr(dst, r.RecordID)
	}
	if r.FailureClass != 0 {
		dst = append(dst, byte(r.FailureClass))
	}
	if r.Extra != "" {
		dst = appendStr(dst, r.Extra)
	}
	if r.Envelope != "" {
		dst = appendStr(dst, r.Envelope)
	}
	if r.Has&auditfmt.HasInboundRedelivered != 0 {
		dst = binary.AppendUvarint(dst, uint64(r.InboundRedelivered))
	}
	if r.Has&auditfmt.HasInboundDuplicates != 0 {
		dst = binary.AppendUvarint(dst, uint64(r.InboundDuplicates))
	}
	if r.Has&auditfmt.HasOutboxDropped != 0 {
		dst = binary.AppendUvarint(dst, uint64(r.OutboxDropped))
	}
	if r.Has&auditfmt.HasInboundExpired != 0 {
		dst = binary.AppendUvarint(dst, uint64(r.InboundExpired))
	}
	dst = appendStr(dst, source)
	return binary.AppendUvarint(dst, uint64(r.Line))
}

// flags3 returns B's flags for r.
func flags3(r *auditfmt.Record) uint64 {
	var f uint64
	set := func(bit uint64, on bool) {
		if on {
			f |= bit
		}
	}
	set(flagClean, r.CleanSession)
	set(flagSchema, r.Has&auditfmt.HasSchema != 0)
	set(flagDeviceSeq, r.Has&auditfmt.HasDeviceSeq != 0)
	set(flagReasonCode, r.Has&auditfmt.HasReasonCode != 0)
	set(flagCeiling, r.Has&auditfmt.HasCeiling != 0)
	set(flagSessionPresent, r.Has&auditfmt.HasSessionPresent != 0)
	set(flagOutboxDepth, r.Has&auditfmt.HasOutboxDepth != 0)
	set(flagOutboxFlushed, r.Has&auditfmt.HasOutboxFlushed != 0)
	set(flagHostID, r.HostID != "")
	set(flagStage, r.Stage != 0)
	set(flagAttemptID, r.AttemptID != "")
	set(flagRecordID, r.RecordID != "")
	set(flagFailureClass, r.FailureClass != 0)
	set(flagExtra, r.Extra != "")
	set(flagEnvelope, r.Envelope != "")
	set(flagInboundRedelivered, r.Has&auditfmt.HasInboundRedelivered != 0)
	set(flagInboundDuplicates, r.Has&auditfmt.HasInboundDuplicates != 0)
	set(flagOutboxDropped, r.Has&auditfmt.HasOutboxDropped != 0)
	set(flagInboundExpired, r.Has&auditfmt.HasInboundExpired != 0)
	return f
}

func appendStr(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Tree3 grows the version 3 tree over a dataset's rows in storage order:
// a leaf, the row's link, for the last row of each segment of a chain
// and for the last row of each chain. A chain's last row is known when
// the next chain begins (a row at seq 0) or at the end: until then its
// link is pending. The zero value is empty; a Tree3 holds no pointers.
type Tree3 struct {
	tree Tree
	seg  segments3
}

// segments3 applies the leaf rule (IsLeaf3) to rows in storage order: a
// row is a leaf at the end of its segment, or at the end of its chain,
// which is known when the next chain's first row comes (or at the end).
type segments3 struct {
	pending tlog.Hash // the current chain's last link, while has
	has     bool
	rows    int64
}

// add takes the row at seq of its chain whose link is link, and returns
// the leaves it completes, in order: the last link of the chain before,
// ended by a row at seq 0 (ended), and the row's own link (leaf).
func (s *segments3) add(seq int64, link tlog.Hash) (ended, leaf tlog.Hash, isEnded, isLeaf bool) {
	if seq == 0 && s.has {
		ended, isEnded = s.pending, true
	}
	s.has = !IsLeaf3(seq, false)
	if s.has {
		s.pending = link
	} else {
		leaf, isLeaf = link, true
	}
	s.rows++
	return ended, leaf, isEnded, isLeaf
}

// end ends the current chain, returning its last link if it is not a
// leaf yet.
func (s *segments3) end() (tlog.Hash, bool) {
	h, ok := s.pending, s.has
	s.has = false
	return h, ok
}

// Add appends the row at seq of its chain whose link is link.
func (t *Tree3) Add(seq int64, link tlog.Hash) {
	ended, leaf, isEnded, isLeaf := t.seg.add(seq, link)
	if isEnded {
		t.tree.Append(ended)
	}
	if isLeaf {
		t.tree.Append(leaf)
	}
}

// Rows returns the number of rows added.
func (t *Tree3) Rows() int64 { return t.seg.rows }

// AddChains appends the rows of whole chains whose leaves l collected:
// the chain before them, if any, ends. Tree3s of consecutive ranges of
// chains, built apart (in parallel), make one tree this way.
func (t *Tree3) AddChains(l *Leaves3) {
	if h, ok := t.seg.end(); ok {
		t.tree.Append(h)
	}
	for _, h := range l.hashes {
		t.tree.Append(h)
	}
	t.seg.rows += l.seg.rows
}

// Leaves3 collects the tree leaves of rows of whole chains, in order,
// for Tree3.AddChains: Add each row as Tree3.Add would, then End.
type Leaves3 struct {
	hashes []tlog.Hash
	seg    segments3
}

// Add adds the row at seq of its chain whose link is link.
func (l *Leaves3) Add(seq int64, link tlog.Hash) {
	ended, leaf, isEnded, isLeaf := l.seg.add(seq, link)
	if isEnded {
		l.hashes = append(l.hashes, ended)
	}
	if isLeaf {
		l.hashes = append(l.hashes, leaf)
	}
}

// End ends the last chain added.
func (l *Leaves3) End() {
	if h, ok := l.seg.end(); ok {
		l.hashes = append(l.hashes, h)
	}
}

// Leaves returns the number of leaves of the tree of the rows added so
// far, each chain ending at the last row added.
func (t *Tree3) Leaves() int64 {
	if t.seg.has {
		return t.tree.Size() + 1
	}
	return t.tree.Size()
}

// MerkleRoot returns the RFC 6962 root of the tree of the rows added so
// far, each chain ending at the last row added.
func (t *Tree3) MerkleRoot() tlog.Hash {
	if !t.seg.has {
		return t.tree.Root()
	}
	tree := t.tree
	tree.Append(t.seg.pending)
	return tree.Root()
}

// Root returns the root a checkpoint of Rows() rows holds: Root3 of the
// rows, the leaves and MerkleRoot.
func (t *Tree3) Root() tlog.Hash { return Root3(t.Rows(), t.Leaves(), t.MerkleRoot()) }

// Root3 returns a version 3 checkpoint's root: SHA-256(0x03 || rows ||
// leaves || merkle), rows and leaves as 8 bytes big-endian, binding the
// tree's shape to the rows it covers.
func Root3(rows, leaves int64, merkle tlog.Hash) tlog.Hash {
	var buf [1 + 8 + 8 + tlog.HashSize]byte
	buf[0] = 0x03
	binary.BigEndian.PutUint64(buf[1:], uint64(rows))
	binary.BigEndian.PutUint64(buf[9:], uint64(leaves))
	copy(buf[17:], merkle[:])
	return sha256.Sum256(buf[:])
}

// DecodeRecordBytes3 reads B (AppendRecordBytes3) back: the record, its
// seq and its source. It fails on bytes that no record encodes to, so
// that AppendRecordBytes3 of what it returns is b again.
func DecodeRecordBytes3(b []byte) (r auditfmt.Record, seq int64, source string, err error) {
	d := decoder3{b: b}
	r.ClientID = d.str()
	seq = int64(d.uvarint())
	r.RecordedAt = int64(d.u64())
	r.OffsetMin = int16(d.u16())
	r.Attempt = int64(d.uvarint())
	r.BackoffDelayS = math.Float64frombits(d.u64())
	r.Outcome = auditfmt.Outcome(d.byte())
	f := d.uvarint()
	r.CleanSession = f&flagClean != 0
	has := func(bit uint64, p auditfmt.Presence) bool {
		if f&bit != 0 {
			r.Has |= p
		}
		return f&bit != 0
	}
	if has(flagSchema, auditfmt.HasSchema) {
		r.Schema = int64(d.uvarint())
	}
	if has(flagDeviceSeq, auditfmt.HasDeviceSeq) {
		r.DeviceSeq = int64(d.uvarint())
	}
	if has(flagReasonCode, auditfmt.HasReasonCode) {
		r.ReasonCode = int64(d.uvarint())
	}
	if has(flagCeiling, auditfmt.HasCeiling) {
		r.CeilingS = math.Float64frombits(d.u64())
	}
	if has(flagSessionPresent, auditfmt.HasSessionPresent) {
		r.SessionPresent = d.byte() == 1
	}
	if has(flagOutboxDepth, auditfmt.HasOutboxDepth) {
		r.OutboxDepth = int64(d.uvarint())
	}
	if has(flagOutboxFlushed, auditfmt.HasOutboxFlushed) {
		r.OutboxFlushed = int64(d.uvarint())
	}
	if f&flagHostID != 0 {
		r.HostID = d.str()
	}
	if f&flagStage != 0 {
		r.Stage = auditfmt.Stage(d.byte())
	}
	if f&flagAttemptID != 0 {
		r.AttemptID = d.str()
	}
	if f&flagRecordID != 0 {
		r.RecordID = d.str()
	}
	if f&flagFailureClass != 0 {
		r.FailureClass = auditfmt.FailureClass(d.byte())
	}
	if f&flagExtra != 0 {
		r.Extra = d.str()
	}
	if f&flagEnvelope != 0 {
		r.Envelope = d.str()
	}
	if has(flagInboundRedelivered, auditfmt.HasInboundRedelivered) {
		r.InboundRedelivered = int64(d.uvarint())
	}
	if has(flagInboundDuplicates, auditfmt.HasInboundDuplicates) {
		r.InboundDuplicates = int64(d.uvarint())
	}
	if has(flagOutboxDropped, auditfmt.HasOutboxDropped) {
		r.OutboxDropped = int64(d.uvarint())
	}
	if has(flagInboundExpired, auditfmt.HasInboundExpired) {
		r.InboundExpired = int64(d.uvarint())
	}
	source = d.str()
	r.Line = int64(d.uvarint())
	switch {
	case d.err != nil:
		return r, seq, source, d.err
	case len(d.b) > 0:
		return r, seq, source, fmt.Errorf("record bytes: %d bytes after the line number", len(d.b))
	case f >= flagInboundExpired<<1:
		return r, seq, source, fmt.Errorf("record bytes: flags %#x: unknown bits", f)
	}
	if err := r.Validate(); err != nil {
		return r, seq, source, fmt.Errorf("record bytes: %v", err)
	}
	if again := AppendRecordBytes3(nil, &r, seq, source); !bytes.Equal(again, b) {
		return r, seq, source, errors.New("record bytes: not in canonical form (an empty optional string, a long varint, a boolean other than 0 or 1)")
	}
	return r, seq, source, nil
}

// decoder3 reads the fields of B, keeping the first error.
type decoder3 struct {
	b   []byte
	err error
}

func (d *decoder3) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("record bytes: %s cut short", what)
	}
	d.b = nil
}

func (d *decoder3) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("a varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder3) take(n int, what string) []byte {
	if n < 0 || len(d.b) < n {
		d.fail(what)
		return make([]byte, max(n, 0))
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder3) u64() uint64 { return binary.BigEndian.Uint64(d.take(8, "a 64-bit field")) }
func (d *decoder3) u16() uint16 { return binary.BigEndian.Uint16(d.take(2, "the offset")) }
func (d *decoder3) byte() byte  { return d.take(1, "a byte")[0] }
func (d *decoder3) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("a string")
		return ""
	}
	return string(d.take(int(n), "a string"))
}
