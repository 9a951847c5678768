package hashchain

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// OpenNote reads a signed note (C2SP signed-note) strictly, as every
// reader of checkpoints and manifests here does, so that a file cannot
// pass one reader and fail another. It rejects, beyond what package note
// rejects, a note that
//
//   - repeats a signature line (package note drops the copy), or carries
//     two signatures by one key;
//   - writes a signature in non-canonical base64 (package note accepts any
//     base64 that decodes), so that a file has exactly one form;
//   - with verifiers, carries a signature by a key that none of them is:
//     a stormaudit note is signed once, by the key that wrote it, and a
//     signature nobody asked for is not evidence but noise an attacker
//     chose.
//
// With verifiers, every signature must verify and the note's Sigs hold
// them; without, the note's UnverifiedSigs hold the signatures it claims,
// unchecked.
func OpenNote(msg []byte, verifiers note.Verifiers) (*note.Note, error) {
	n, err := note.Open(msg, anyKey{})
	var unverified *note.UnverifiedNoteError
	if !errors.As(err, &unverified) {
		return nil, malformedNote{openError(msg, err)}
	}
	n = unverified.Note
	if err := strictSigs(msg, n); err != nil {
		return nil, err
	}
	if verifiers == nil {
		return n, nil
	}
	v, err := note.Open(msg, verifiers)
	if err != nil {
		return nil, openError(msg, err)
	}
	if len(v.UnverifiedSigs) > 0 {
		var names []string
		for _, s := range v.UnverifiedSigs {
			names = append(names, fmt.Sprintf("%s+%08x", s.Name, s.Hash))
		}
		return nil, fmt.Errorf("hashchain: the note is also signed by %s, which no verifier names: a note here is signed once, by the key that wrote it",
			strings.Join(names, ", "))
	}
	return v, nil
}

// strictSigs checks n's signature lines, as msg writes them: each once,
// one per key, in canonical base64.
func strictSigs(msg []byte, n *note.Note) error {
	seen := map[string]bool{}
	keys := map[string]bool{}
	sigs := msg[len(n.Text)+1:] // after the text and the blank line
	for _, line := range bytes.SplitAfter(sigs, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if seen[string(line)] {
			return fmt.Errorf("hashchain: the signature line %q appears twice: a note carries each signature once", bytes.TrimSpace(line))
		}
		seen[string(line)] = true
	}
	for _, sig := range n.UnverifiedSigs {
		k := fmt.Sprintf("%s+%08x", sig.Name, sig.Hash)
		if keys[k] {
			return fmt.Errorf("hashchain: two signatures by the key %s: a note carries one per key", k)
		}
		keys[k] = true
		b, err := base64.StdEncoding.Strict().DecodeString(sig.Base64)
		if err != nil || base64.StdEncoding.EncodeToString(b) != sig.Base64 {
			return fmt.Errorf("hashchain: the signature by %s is not in canonical base64", sig.Name)
		}
	}
	return nil
}

// malformedNote is the error of a message that is no signed note at all.
type malformedNote struct{ err error }

func (e malformedNote) Error() string { return e.err.Error() }
func (e malformedNote) Unwrap() error { return e.err }

// anyKey knows no key: it lets note.Open parse a note and list its
// signatures before any key is trusted.
type anyKey struct{}

func (anyKey) Verifier(name string, hash uint32) (note.Verifier, error) {
	return nil, &note.UnknownVerifierError{Name: name, KeyHash: hash}
}

// CheckpointFile is what a checkpoint file says.
type CheckpointFile struct {
	Checkpoint
	Signed   bool     // a signed note, not a bare checkpoint
	Signers  []string // the names on its signatures
	Verified bool     // the signatures were checked against verifiers
}

// ReadCheckpointFile reads the contents of a checkpoint file strictly.
// With verifiers it must be a signed note that OpenNote accepts; without,
// a bare checkpoint, or a signed note whose signatures are reported,
// unchecked.
func ReadCheckpointFile(msg []byte, verifiers note.Verifiers) (CheckpointFile, error) {
	if c, err := ParseCheckpoint(msg); err == nil {
		if verifiers != nil {
			return CheckpointFile{Checkpoint: c}, errors.New("hashchain: not signed, but verifier keys were given: anyone could have written it")
		}
		return CheckpointFile{Checkpoint: c}, nil
	}
	n, err := OpenNote(msg, verifiers)
	var malformed malformedNote
	switch {
	case errors.As(err, &malformed) && verifiers == nil:
		return CheckpointFile{}, fmt.Errorf("hashchain: the checkpoint file is neither a checkpoint nor a signed note: %w", unprefixed{err})
	case err != nil:
		return CheckpointFile{}, err
	}
	c, err := ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return CheckpointFile{}, fmt.Errorf("hashchain: signed checkpoint: %w", err)
	}
	f := CheckpointFile{Checkpoint: c, Signed: true, Verified: verifiers != nil}
	for _, sigs := range [][]note.Signature{n.Sigs, n.UnverifiedSigs} {
		for _, s := range sigs {
			f.Signers = append(f.Signers, s.Name)
		}
	}
	return f, nil
}
