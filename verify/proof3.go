package verify

import (
	"encoding/base64"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// prove3 is Prove of a dataset of chain version 3: the record's bytes,
// those of the later records of its segment up to the tree leaf, and the
// leaf's inclusion proof. It verifies the dataset on the way, and holds
// one 32-byte hash per leaf (one per 64 rows, and one per chain).
func prove3(dir, origin string, seq int64) (*hashchain.Proof, error) {
	var leaves hashchain.LeafHashes
	var pending tlog.Hash // the current chain's last link, not yet a leaf
	var has bool
	var found *hashchain.Proof
	collecting := false // found's segment has not ended yet
	var example string
	lastSeq := int64(-1)
	var buf []byte
	hook := func(rec *auditfmt.Record, pos *hashchain.Pos, source string, _, prevLink tlog.Hash) {
		if example == "" {
			example = pos.Origin
		}
		if pos.Seq == 0 && has {
			leaves, has = append(leaves, pending), false
			collecting = false // the chain before ended: its last link was the leaf
		}
		if pos.Origin == origin {
			lastSeq = pos.Seq
		}
		buf = hashchain.AppendRecordBytes3(buf[:0], rec, pos.Seq, source)
		switch {
		case pos.Origin == origin && pos.Seq == seq:
			found = &hashchain.Proof{Format: hashchain.ProofFormat3, Record: string(rec.AppendJSON(nil)), Origin: origin, Seq: seq,
				PrevLink: prevLink, Link: pos.Link, Source: source, Line: rec.Line, Bytes: base64.StdEncoding.EncodeToString(buf)}
			collecting = true
		case collecting:
			found.Following = append(found.Following, base64.StdEncoding.EncodeToString(buf))
		}
		if collecting {
			found.Index = int64(len(leaves)) // the leaf it ends at, when it ends
		}
		if hashchain.IsLeaf3(pos.Seq, false) {
			leaves, has, collecting = append(leaves, pos.Link), false, false
		} else {
			pending, has = pos.Link, true
		}
	}
	rep, cpText, err := verify(dir, Options{}, hook)
	if err != nil {
		return nil, err
	}
	if rep.Problem != nil {
		return nil, fmt.Errorf("%s does not verify: %s", dir, rep.Problem)
	}
	if has {
		leaves = append(leaves, pending)
	}
	if found == nil {
		return nil, notFound(dir, rep.Log, origin, seq, lastSeq, example)
	}
	size := rep.Checkpoint.Size
	if rep.Records > size {
		return nil, fmt.Errorf("%s: the dataset has %d rows after its checkpoint: it has no signed proof", dir, rep.Records-size)
	}
	found.TreeSize, found.Leaves = size, int64(len(leaves))
	root, err := tlog.TreeHash(found.Leaves, leaves.HashReader())
	if err != nil {
		return nil, err
	}
	found.TreeRoot = &root
	found.Inclusion, err = tlog.ProveRecord(found.Leaves, found.Index, leaves.HashReader())
	if err != nil {
		return nil, err
	}
	found.Checkpoint = string(cpText)
	return found, nil
}
