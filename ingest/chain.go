package ingest

import (
	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// hashed is a record on its way through the sort with h, its record hash
// (docs/hashchain.md). The hash depends on the record and where it was
// read only, so it is computed where the record is decoded, in parallel;
// only the links and the tree need dataset order.
type hashed struct {
	rec auditfmt.Record
	h   tlog.Hash
}

// hasher computes record hashes; with validateOnly (Scan, which chains
// nothing) it only checks that each record has canonical bytes, so that
// Scan accepts exactly the records Run does.
type hasher struct {
	hashchain.Hasher
	validateOnly bool
}

// hash sets e.h, the record hash of e.rec read from source. It fails as
// hashchain.AppendRecordBytes does, for a record that has no canonical
// bytes.
func (e *hashed) hash(hs *hasher, source string) error {
	if hs.validateOnly {
		return hs.Check(&e.rec, source)
	}
	var err error
	e.h, _, err = hs.Record(&e.rec, source)
	return err
}

// treeBuilder grows the tree over the rows of a dataset, in order.
type treeBuilder struct {
	tree hashchain.Tree
}

// add appends the leaves of the chained rows at pos to the tree.
func (t *treeBuilder) add(pos []hashchain.Pos) {
	for i := range pos {
		t.tree.Append(hashchain.Leaf(pos[i]))
	}
}

// grow adds the rows of each batch from in to the tree and passes the
// batch on to out, which it closes at the end of in.
func (t *treeBuilder) grow(in <-chan *rowBatch, out chan<- *rowBatch) {
	defer close(out)
	for b := range in {
		t.add(b.pos)
		out <- b
	}
}

// checkpoint returns the checkpoint of the log named log over the rows
// added so far.
func (t *treeBuilder) checkpoint(log string) hashchain.Checkpoint {
	return hashchain.Checkpoint{Origin: log, Size: t.tree.Size(), Root: t.tree.Root()}
}
