package ingest

import (
	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// hashed is a record on its way through the sort. (Version 2 carried its
// record hash, computed where it was decoded; version 3 links each
// record in dataset order, from its canonical bytes B.)
type hashed struct {
	rec auditfmt.Record
}

// hasher checks that each record has canonical bytes, so that ingest and
// Scan accept exactly the records version 2 did (docs/hashchain.md).
type hasher struct {
	hashchain.Hasher
	validateOnly bool // always: kept for the callers' sake
}

// hash checks that e.rec has canonical bytes; it fails as
// hashchain.CheckRecord does.
func (e *hashed) hash(hs *hasher, source string) error { return hs.Check(&e.rec, source) }

// treeBuilder grows the tree over the rows of a dataset, in order.
type treeBuilder struct {
	tree hashchain.Tree3
}

// add adds the chained rows at pos to the tree.
func (t *treeBuilder) add(pos []hashchain.Pos) {
	for i := range pos {
		t.tree.Add(pos[i].Seq, pos[i].Link)
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
// added so far: their number, and the root of the version 3 tree.
func (t *treeBuilder) checkpoint(log string) hashchain.Checkpoint {
	return hashchain.Checkpoint{Origin: log, Size: t.tree.Rows(), Root: t.tree.Root()}
}
