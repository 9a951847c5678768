package hashchain

import (
	"crypto/sha256"
	"strconv"

	"github.com/stormaudit/stormaudit/auditfmt"

	"golang.org/x/mod/sumdb/tlog"
)

// RecordHash returns h, the hash of a record's canonical bytes R:
// SHA-256(0x00 || R), the RFC 6962 leaf hash of R (the same as
// [tlog.RecordHash]).
func RecordHash(R []byte) tlog.Hash { return leafHash(R) }

// leafHash returns SHA-256(0x00 || b), hashing small inputs from a stack
// buffer to save the allocation of a hash.Hash.
func leafHash(b []byte) tlog.Hash {
	var buf [512]byte
	if len(b) < len(buf) {
		n := copy(buf[1:], b)
		return sha256.Sum256(buf[:1+n])
	}
	h := sha256.New()
	h.Write(buf[:1])
	h.Write(b)
	var sum tlog.Hash
	h.Sum(sum[:0])
	return sum
}

// genesisPrefix starts the input of the hash before a chain's first record.
const genesisPrefix = "stormaudit/chain/v1\n"

// Genesis returns link[-1], the link before the first record of the chain
// named origin: SHA-256("stormaudit/chain/v1\n" || origin || "\n").
func Genesis(origin string) tlog.Hash {
	b := make([]byte, 0, len(genesisPrefix)+len(origin)+1)
	b = append(b, genesisPrefix...)
	b = append(b, origin...)
	return sha256.Sum256(append(b, '\n'))
}

// NextLink returns link[n] = SHA-256(link[n-1] || h[n]), the link of a
// record whose hash is recordHash and whose predecessor's link is prev.
func NextLink(prev, recordHash tlog.Hash) tlog.Hash {
	var buf [2 * tlog.HashSize]byte
	copy(buf[:], prev[:])
	copy(buf[tlog.HashSize:], recordHash[:])
	return sha256.Sum256(buf[:])
}

// appendRowInt appends v as RFC 8785 writes the number v.
func appendRowInt(dst []byte, v int64) []byte {
	if v > maxExactInt || v < -maxExactInt {
		return appendES6(dst, float64(v))
	}
	return strconv.AppendInt(dst, v, 10)
}

// A Hasher computes the record hashes of dataset rows, reusing its
// buffer. It is not safe for concurrent use: use one per goroutine.
type Hasher struct{ buf []byte }

// Record returns the record hash of r read from source (its R holds
// source and r.Line: AppendSourcedRecordBytes), and the length of R. It
// fails as AppendRecordBytes does, for a record that has no R.
func (h *Hasher) Record(r *auditfmt.Record, source string) (tlog.Hash, int, error) {
	var err error
	h.buf, err = AppendSourcedRecordBytes(h.buf[:0], r, source)
	if err != nil {
		return tlog.Hash{}, 0, err
	}
	return RecordHash(h.buf), len(h.buf), nil
}

// Check reports whether r has canonical bytes R, as Record does, without
// building or hashing them (CheckRecord): for a reader that chains
// nothing but must accept exactly the records a chaining ingest accepts.
// (The source a row was read from, also in R, cannot make R fail.)
func (h *Hasher) Check(r *auditfmt.Record, _ string) error { return CheckRecord(r) }
