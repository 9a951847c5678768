package dataset

import (
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// ProofFormat names version 1 of the single-record proof file.
const ProofFormat = "stormaudit-record-proof-v1"

// Proof is one record with everything needed to check, without the
// dataset, that it is in the signed log: its canonical bytes, its chain
// position and the link before it, where it was read, and an RFC 6962
// inclusion proof against the signed checkpoint.
type Proof struct {
	Format     string      `json:"format"`
	Record     string      `json:"record"` // the canonical bytes R, as a string
	Origin     string      `json:"origin"`
	Seq        int64       `json:"seq"`
	PrevLink   tlog.Hash   `json:"prev_link"`
	Link       tlog.Hash   `json:"link"`
	Source     string      `json:"source"`
	Line       int64       `json:"line"`
	Index      int64       `json:"index"` // the row's index in the tree
	TreeSize   int64       `json:"tree_size"`
	Inclusion  []tlog.Hash `json:"inclusion"`
	Checkpoint string      `json:"checkpoint"` // the dataset's checkpoint file, verbatim
}

// Prove returns the proof of the record at seq in the chain origin of the
// dataset in dir. It verifies the dataset on the way, and holds one
// 32-byte leaf hash per row in memory.
func Prove(dir, origin string, seq int64) (*Proof, error) {
	var leaves hashchain.LeafHashes
	var found *Proof
	var rerr error
	hook := func(rec *auditfmt.Record, pos *ChainPos, source string, leaf, prevLink tlog.Hash) {
		if pos.Origin == origin && pos.Seq == seq {
			var r []byte
			r, rerr = hashchain.AppendSourcedRecordBytes(nil, rec, source)
			found = &Proof{Format: ProofFormat, Record: string(r), Origin: origin, Seq: seq,
				PrevLink: prevLink, Link: pos.Link, Source: source, Line: rec.Line, Index: int64(len(leaves))}
		}
		leaves = append(leaves, leaf)
	}
	rep, cpText, err := verify(dir, VerifyOptions{}, hook)
	if err != nil {
		return nil, err
	}
	if rep.Problem != nil {
		return nil, fmt.Errorf("%s does not verify: %s", dir, rep.Problem)
	}
	if rerr != nil {
		return nil, rerr
	}
	if found == nil {
		return nil, fmt.Errorf("%s: no record with origin %q and seq %d", dir, origin, seq)
	}
	size := rep.Checkpoint.Size
	if found.Index >= size {
		return nil, fmt.Errorf("%s: origin %q seq %d is in the unsealed tail (row %d, checkpoint size %d): it has no signed proof yet", dir, origin, seq, found.Index, size)
	}
	found.TreeSize = size
	found.Inclusion, err = tlog.ProveRecord(size, found.Index, leaves[:size].HashReader())
	if err != nil {
		return nil, err
	}
	found.Checkpoint = string(cpText)
	return found, nil
}

// CheckProof checks a proof: the record's bytes against its link, the
// row's leaf against the inclusion proof and the checkpoint's root, and
// the checkpoint's signature against verifiers (nil: not checked). It
// returns the checkpoint and the names of the verified signers.
func CheckProof(p *Proof, verifiers note.Verifiers) (hashchain.Checkpoint, []string, error) {
	if p.Format != ProofFormat {
		return hashchain.Checkpoint{}, nil, fmt.Errorf("format: expected %q, found %q", ProofFormat, p.Format)
	}
	canon, err := hashchain.AppendCanonicalJSON(nil, []byte(p.Record))
	if err != nil || string(canon) != p.Record {
		return hashchain.Checkpoint{}, nil, fmt.Errorf("record: expected canonical (RFC 8785) JSON bytes")
	}
	h := hashchain.RecordHash([]byte(p.Record))
	if p.Seq == 0 && p.PrevLink != hashchain.Genesis(p.Origin) {
		return hashchain.Checkpoint{}, nil, fmt.Errorf("prev_link: seq 0 must follow the chain's genesis hash")
	}
	if hashchain.NextLink(p.PrevLink, h) != p.Link {
		return hashchain.Checkpoint{}, nil, fmt.Errorf("link: the record does not match its chain link")
	}
	w := hashchain.AppendRowBytes(nil, p.Origin, p.Seq, p.Link, p.Source, p.Line)
	f, err := hashchain.ReadCheckpointFile([]byte(p.Checkpoint), verifiers)
	if err != nil {
		return f.Checkpoint, nil, fmt.Errorf("checkpoint: %v", strings.TrimPrefix(err.Error(), "hashchain: "))
	}
	cp, signers := f.Checkpoint, []string(nil)
	if f.Verified {
		signers = f.Signers
	}
	if cp.Size != p.TreeSize {
		return cp, nil, fmt.Errorf("tree_size: the checkpoint is of %d records, the proof of %d", cp.Size, p.TreeSize)
	}
	if err := tlog.CheckRecord(p.Inclusion, p.TreeSize, cp.Root, p.Index, hashchain.LeafHash(w)); err != nil {
		return cp, nil, fmt.Errorf("inclusion: the record is not at row %d of the checkpointed tree: %v", p.Index, err)
	}
	return cp, signers, nil
}
