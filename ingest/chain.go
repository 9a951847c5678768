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

// linker links records into their chains, in dataset order, reusing one
// buffer for their canonical bytes B: what the stream and each
// partition's merge do with every record they keep.
type linker struct {
	chains *hashchain.Chains
	names  []string // Record.Source's names
	b      []byte
}

// link appends rec to its device's chain and returns its place there.
func (l *linker) link(rec *auditfmt.Record) hashchain.Pos {
	return l.chains.Append3(rec.ClientID, func(seq int64) []byte {
		l.b = hashchain.AppendRecordBytes3(l.b[:0], rec, seq, l.names[rec.Source])
		return l.b
	})
}
