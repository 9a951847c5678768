package hashchain

import (
	"encoding/base64"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// checkProof3 checks a version 3 proof (docs/hashchain.md): B decodes to
// the record, seq, source and line the proof names; its link follows
// prev_link (the chain's genesis at seq 0); the links of the following
// records of its chain lead to the leaf, which the inclusion proof puts
// at index of the checkpointed tree.
func checkProof3(p *Proof, verifiers note.Verifiers) (Checkpoint, []string, error) {
	b, err := decodeB64("bytes", p.Bytes)
	if err != nil {
		return Checkpoint{}, nil, err
	}
	rec, seq, source, err := DecodeRecordBytes3(b)
	switch {
	case err != nil:
		return Checkpoint{}, nil, fmt.Errorf("bytes: %v", err)
	case seq != p.Seq || p.Seq < 0:
		return Checkpoint{}, nil, fmt.Errorf("seq: the record's bytes say %d, the proof %d", seq, p.Seq)
	case source != p.Source || rec.Line != p.Line:
		return Checkpoint{}, nil, fmt.Errorf("source: the record's bytes do not say it was read from %s line %d", p.Source, p.Line)
	case string(rec.AppendJSON(nil)) != p.Record:
		return Checkpoint{}, nil, errors.New("record: not the record the bytes hold")
	case len(p.Following) >= SegmentLen:
		return Checkpoint{}, nil, fmt.Errorf("following: %d records, but a segment holds %d", len(p.Following), SegmentLen)
	}
	cp, signers, err := p.checkpoint(verifiers)
	if err != nil {
		return cp, nil, err
	}
	if !IsOrigin(p.Origin, cp.Origin, rec.ClientID) {
		return cp, nil, fmt.Errorf("origin: expected %q (the checkpoint's log and the record's client_id), found %q", Origin(cp.Origin, rec.ClientID), p.Origin)
	}
	if seq == 0 && p.PrevLink != Genesis3(p.Origin) {
		return cp, nil, errors.New("prev_link: seq 0 must follow the chain's genesis hash")
	}
	if Link3(p.PrevLink, b) != p.Link {
		return cp, nil, errors.New("link: the record does not match its chain link")
	}
	leaf := p.Link
	for i, text := range p.Following {
		fb, err := decodeB64(fmt.Sprintf("following[%d]", i), text)
		if err != nil {
			return cp, nil, err
		}
		next, nseq, _, err := DecodeRecordBytes3(fb)
		if err != nil || next.ClientID != rec.ClientID || nseq != seq+1+int64(i) {
			return cp, nil, fmt.Errorf("following[%d]: expected the record at seq %d of the same chain", i, seq+1+int64(i))
		}
		leaf = Link3(leaf, fb)
	}
	if cp.Size != p.TreeSize {
		return cp, nil, fmt.Errorf("tree_size: the checkpoint is of %d records, the proof of %d", cp.Size, p.TreeSize)
	}
	if p.TreeRoot == nil || Root3(p.TreeSize, p.Leaves, *p.TreeRoot) != cp.Root {
		return cp, nil, errors.New("tree_root: with tree_size and leaves, not the checkpoint's root")
	}
	if err := tlog.CheckRecord(p.Inclusion, p.Leaves, *p.TreeRoot, p.Index, leaf); err != nil {
		return cp, nil, fmt.Errorf("inclusion: the record's segment is not leaf %d of the checkpointed tree: %v", p.Index, err)
	}
	return cp, signers, nil
}

// decodeB64 reads a field written in canonical standard base64.
func decodeB64(name, text string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(text)
	if err != nil || base64.StdEncoding.EncodeToString(b) != text {
		return nil, fmt.Errorf("%s: expected canonical base64", name)
	}
	return b, nil
}
