package hashchain

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"

	"golang.org/x/mod/sumdb/tlog"
)

// RecordHash returns h, the hash of a record's canonical bytes R:
// SHA-256(0x00 || R), the RFC 6962 leaf hash of R (the same as
// [tlog.RecordHash]).
func RecordHash(R []byte) tlog.Hash { return leafHash(R) }

// LeafHash returns the tree leaf of a row's bytes W: SHA-256(0x00 || W).
func LeafHash(W []byte) tlog.Hash { return leafHash(W) }

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

// AppendRowBytes appends W, the canonical bytes of a dataset row, to dst:
// the RFC 8785 serialisation of
//
//	{"line": line, "link": base64(link), "origin": origin, "seq": seq, "source": source}
//
// where origin names the row's chain, seq is the record's place in it, link
// is its chain link, and source and line say where the record was read.
// Invalid UTF-8 in origin or source is written as U+FFFD, byte by byte.
// seq and line are exact below 2^53 (beyond it they are written as RFC 8785
// writes the double nearest them).
func AppendRowBytes(dst []byte, origin string, seq int64, link tlog.Hash, source string, line int64) []byte {
	dst = append(dst, `{"line":`...)
	dst = appendRowInt(dst, line)
	dst = append(dst, `,"link":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, link[:])
	dst = append(dst, `","origin":`...)
	dst, _ = appendJSONString(dst, origin)
	dst = append(dst, `,"seq":`...)
	dst = appendRowInt(dst, seq)
	dst = append(dst, `,"source":`...)
	dst, _ = appendJSONString(dst, source)
	return append(dst, '}')
}

// appendRowInt appends v as RFC 8785 writes the number v.
func appendRowInt(dst []byte, v int64) []byte {
	if v > maxExactInt || v < -maxExactInt {
		return appendES6(dst, float64(v))
	}
	return strconv.AppendInt(dst, v, 10)
}
