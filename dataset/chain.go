package dataset

import (
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

// hashed is a record on its way through the sort with h, its record hash
// (docs/hashchain.md). The hash depends on the record and where it was
// read only, so it is computed where the record is decoded, in parallel;
// only the links and the tree need dataset order.
type hashed struct {
	rec auditfmt.Record
	h   tlog.Hash
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

// hash sets e.h, the record hash of e.rec read from source. It fails as
// AppendRecordBytes does, for a record that has no canonical bytes.
func (h *rowHasher) hash(e *hashed, source string) error {
	var err error
	e.h, _, err = h.recordHash(&e.rec, source)
	return err
}

// leaf returns the tree leaf of a row at pos read from source:line.
func (h *rowHasher) leaf(pos *ChainPos, source string, line int64) tlog.Hash {
	h.w = hashchain.AppendRowBytes(h.w[:0], pos.Origin, pos.Seq, pos.Link, source, line)
	return hashchain.LeafHash(h.w)
}

// chainer assigns chain positions to hashed records arriving in dataset
// order.
type chainer struct {
	log    string
	client string
	pos    ChainPos
}

// next returns the chain position of e, the next row of the dataset.
func (c *chainer) next(e *hashed) ChainPos {
	if e.rec.ClientID != c.client || c.pos.Origin == "" {
		origin := OriginOf(c.log, e.rec.ClientID)
		c.client = e.rec.ClientID
		c.pos = ChainPos{Origin: origin, Seq: 0, Link: hashchain.NextLink(hashchain.Genesis(origin), e.h)}
	} else {
		c.pos.Seq++
		c.pos.Link = hashchain.NextLink(c.pos.Link, e.h)
	}
	return c.pos
}

// treeBuilder grows the tree over the rows of a dataset, in order.
type treeBuilder struct {
	names  []string // input names, by Record.Source
	hasher rowHasher
	tree   hashchain.Tree
}

// add appends the leaves of the chained rows recs, at pos, to the tree.
func (t *treeBuilder) add(recs []auditfmt.Record, pos []ChainPos) {
	for i := range recs {
		t.tree.Append(t.hasher.leaf(&pos[i], t.names[recs[i].Source], recs[i].Line))
	}
}

// checkpoint returns the checkpoint of the log named log over the rows
// added so far.
func (t *treeBuilder) checkpoint(log string) hashchain.Checkpoint {
	return hashchain.Checkpoint{Origin: log, Size: t.tree.Size(), Root: t.tree.Root()}
}
