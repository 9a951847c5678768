package dataset

import (
	"unicode/utf8"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// ChainPos is a row's place in its device's hash chain (docs/hashchain.md):
// the chain's origin LOG/CLIENT_ID, the row's sequence number in it,
// contiguous from 0, and the link hash that commits to this record and
// every earlier record of the chain.
type ChainPos struct {
	Origin string
	Seq    int64
	Link   tlog.Hash
}

// OriginOf returns the origin of client's chain in the log named log.
func OriginOf(log, client string) string { return log + "/" + client }

// rowHasher computes the bytes and hashes of rows, reusing its buffers.
// It is not safe for concurrent use.
type rowHasher struct {
	r, w []byte
}

// recordHash returns the record hash of rec, read from source, and the
// length of its canonical bytes R.
func (h *rowHasher) recordHash(rec *auditfmt.Record, source string) (tlog.Hash, int, error) {
	var err error
	h.r, err = hashchain.AppendSourcedRecordBytes(h.r[:0], rec, source)
	if err != nil {
		return tlog.Hash{}, 0, err
	}
	return hashchain.RecordHash(h.r), len(h.r), nil
}

// checkCanonical returns the error AppendRecordBytes would give for rec,
// computing R only for the records that can fail: those with unknown
// members or an envelope (whose numbers and strings RFC 8785 may not
// write exactly), integers beyond 2^53, or strings that are not UTF-8.
func (h *rowHasher) checkCanonical(rec *auditfmt.Record) error {
	const maxExact = 1 << 53
	if rec.Extra == "" && rec.Envelope == "" && rec.Attempt <= maxExact && rec.DeviceSeq <= maxExact &&
		utf8.ValidString(rec.ClientID) && utf8.ValidString(rec.HostID) &&
		utf8.ValidString(rec.AttemptID) && utf8.ValidString(rec.RecordID) {
		return nil
	}
	_, _, err := h.recordHash(rec, "")
	return err
}

// leaf returns the tree leaf of a row at pos read from source:line.
func (h *rowHasher) leaf(pos *ChainPos, source string, line int64) tlog.Hash {
	h.w = hashchain.AppendRowBytes(h.w[:0], pos.Origin, pos.Seq, pos.Link, source, line)
	return hashchain.LeafHash(h.w)
}

// chainer assigns chain positions to records arriving in dataset order
// and grows the tree over their rows.
type chainer struct {
	log    string
	names  []string // input names, by Record.Source
	hasher rowHasher
	tree   hashchain.Tree
	client string
	pos    ChainPos
	bytes  int64 // canonical record bytes hashed
}

// next chains rec, the next row of the dataset.
func (c *chainer) next(rec *auditfmt.Record) (ChainPos, error) {
	h, n, err := c.hasher.recordHash(rec, c.names[rec.Source])
	if err != nil {
		return ChainPos{}, err
	}
	c.bytes += int64(n)
	if rec.ClientID != c.client || c.pos.Origin == "" {
		c.client = rec.ClientID
		c.pos = ChainPos{Origin: OriginOf(c.log, rec.ClientID), Seq: 0, Link: hashchain.NextLink(hashchain.Genesis(OriginOf(c.log, rec.ClientID)), h)}
	} else {
		c.pos.Seq++
		c.pos.Link = hashchain.NextLink(c.pos.Link, h)
	}
	c.tree.Append(c.hasher.leaf(&c.pos, c.names[rec.Source], rec.Line))
	return c.pos, nil
}

// checkpoint returns the checkpoint of the rows chained so far.
func (c *chainer) checkpoint() hashchain.Checkpoint {
	return hashchain.Checkpoint{Origin: c.log, Size: c.tree.Size(), Root: c.tree.Root()}
}
