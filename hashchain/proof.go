package hashchain

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// ProofFormat names version 2 of the single-record proof file, of a
// dataset of chain version 2; ProofFormat3 names version 3, of chain
// version 3.
const (
	ProofFormat  = "stormaudit-record-proof-v2"
	ProofFormat3 = "stormaudit-record-proof-v3"
)

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
	Source     string      `json:"source"` // as R's "source" member says
	Line       int64       `json:"line"`
	Index      int64       `json:"index"` // the row's index in the tree (version 3: its segment leaf's)
	TreeSize   int64       `json:"tree_size"`
	Inclusion  []tlog.Hash `json:"inclusion"`
	Checkpoint string      `json:"checkpoint"` // the log's checkpoint file, verbatim

	// Version 3 (ProofFormat3): Record is the record in the seed format,
	// as B says it; Bytes is B in base64; Following holds the B of the
	// later records of its segment, up to the one whose link is the tree
	// leaf; Leaves is the number of the tree's leaves at the checkpoint
	// (TreeSize counts rows).
	Bytes     string     `json:"bytes,omitempty"`
	Following []string   `json:"following,omitempty"`
	Leaves    int64      `json:"leaves,omitempty"`
	TreeRoot  *tlog.Hash `json:"tree_root,omitempty"` // the RFC 6962 root of the leaves (Root3)
}

// ParseProof reads a proof file strictly: one JSON object with exactly
// the members of Proof, each of its type.
func ParseProof(b []byte) (*Proof, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p Proof
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("not a record proof: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a record proof: text after the JSON object")
	}
	// tlog.Hash decodes base64 leniently (the padding bits are ignored):
	// each hash must be written as it encodes, so that no two texts make
	// one proof
	var raw struct {
		PrevLink  string   `json:"prev_link"`
		Link      string   `json:"link"`
		Inclusion []string `json:"inclusion"`
		TreeRoot  *string  `json:"tree_root"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("not a record proof: %w", err)
	}
	canonical := func(name, text string, h tlog.Hash) error {
		if base64.StdEncoding.EncodeToString(h[:]) != text {
			return fmt.Errorf("not a record proof: %s: expected canonical base64 of 32 bytes, found %q", name, text)
		}
		return nil
	}
	if err := errors.Join(canonical("prev_link", raw.PrevLink, p.PrevLink), canonical("link", raw.Link, p.Link)); err != nil {
		return nil, err
	}
	if raw.TreeRoot != nil && p.TreeRoot != nil {
		if err := canonical("tree_root", *raw.TreeRoot, *p.TreeRoot); err != nil {
			return nil, err
		}
	}
	for i, text := range raw.Inclusion {
		if err := canonical(fmt.Sprintf("inclusion[%d]", i), text, p.Inclusion[i]); err != nil {
			return nil, err
		}
	}
	return &p, nil
}

// CheckProof checks a proof: that the record's bytes are canonical and
// say the source and line the proof names, that they hash to the link
// after prev_link (the chain's genesis at seq 0), that the row's leaf is
// at index in the checkpointed tree, and, with verifiers (nil: not
// checked), the checkpoint's signature. It returns the checkpoint and the
// names of the verified signers.
func CheckProof(p *Proof, verifiers note.Verifiers) (Checkpoint, []string, error) {
	if p.Format == ProofFormat3 {
		return checkProof3(p, verifiers)
	}
	if p.Format != ProofFormat {
		return Checkpoint{}, nil, fmt.Errorf("format: expected %q or %q, found %q", ProofFormat, ProofFormat3, p.Format)
	}
	if p.Bytes != "" || p.Following != nil || p.Leaves != 0 || p.TreeRoot != nil {
		return Checkpoint{}, nil, fmt.Errorf("format: a %s proof has no bytes, following, leaves or tree_root (those are %s's)", ProofFormat, ProofFormat3)
	}
	canon, err := AppendCanonicalJSON(nil, []byte(p.Record))
	if err != nil || string(canon) != p.Record {
		return Checkpoint{}, nil, errors.New("record: expected canonical (RFC 8785) JSON bytes")
	}
	var r struct {
		Record struct {
			ClientID string `json:"client_id"`
		} `json:"record"`
		Source *struct {
			File string `json:"file"`
			Line int64  `json:"line"`
		} `json:"source"`
	}
	if err := json.Unmarshal([]byte(p.Record), &r); err != nil || r.Source == nil ||
		r.Source.File != p.Source || r.Source.Line != p.Line {
		return Checkpoint{}, nil, fmt.Errorf("source: the record's bytes do not say it was read from %s line %d", p.Source, p.Line)
	}
	if p.Seq < 0 {
		return Checkpoint{}, nil, fmt.Errorf("seq: expected an integer >= 0, found %d", p.Seq)
	}
	if p.Seq == 0 && p.PrevLink != Genesis(p.Origin) {
		return Checkpoint{}, nil, errors.New("prev_link: seq 0 must follow the chain's genesis hash")
	}
	if NextLink(p.PrevLink, RecordHash([]byte(p.Record))) != p.Link {
		return Checkpoint{}, nil, errors.New("link: the record does not match its chain link")
	}
	cp, signers, err := p.checkpoint(verifiers)
	if err != nil {
		return cp, nil, err
	}
	if !IsOrigin(p.Origin, cp.Origin, r.Record.ClientID) {
		return cp, nil, fmt.Errorf("origin: expected %q (the checkpoint's log and the record's client_id), found %q", Origin(cp.Origin, r.Record.ClientID), p.Origin)
	}
	if cp.Size != p.TreeSize {
		return cp, nil, fmt.Errorf("tree_size: the checkpoint is of %d records, the proof of %d", cp.Size, p.TreeSize)
	}
	leaf := Leaf(Pos{Origin: p.Origin, Seq: p.Seq, Link: p.Link})
	if err := tlog.CheckRecord(p.Inclusion, p.TreeSize, cp.Root, p.Index, leaf); err != nil {
		return cp, nil, fmt.Errorf("inclusion: the record is not at row %d of the checkpointed tree: %v", p.Index, err)
	}
	return cp, signers, nil
}

// checkpoint reads the proof's checkpoint and, with verifiers, checks
// its signature; it returns the names of the verified signers.
func (p *Proof) checkpoint(verifiers note.Verifiers) (Checkpoint, []string, error) {
	f, err := ReadCheckpointFile([]byte(p.Checkpoint), verifiers)
	if err != nil {
		return f.Checkpoint, nil, fmt.Errorf("checkpoint: %v", strings.TrimPrefix(err.Error(), "hashchain: "))
	}
	if !f.Verified {
		return f.Checkpoint, nil, nil
	}
	return f.Checkpoint, f.Signers, nil
}
