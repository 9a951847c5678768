package verify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
)

// TestVerifyEveryBitFlip flips one bit of every byte of a small part file
// in turn: each flip is tampering (a Problem, exit 1), never a panic and
// never an error, and the readers of the package dataset (rows, a
// client's rows, Arrow batches, the row groups) return an error, never
// panic. Issue 25: 37 of 4,813 flips panicked inside parquet-go or
// failed with "readat: negative offset".
func TestVerifyEveryBitFlip(t *testing.T) {
	signer, _ := testkit.Keys(t, "collector-1")
	dir := filepath.Join(t.TempDir(), "ds")
	m := ingestLines(t, dir, signer, testkit.GenLines(12, 3, 5))
	part := filepath.Join(dir, m.Files[0].Name)
	orig, err := os.ReadFile(part)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes, %d flips", len(orig), len(orig))
	flipped := make([]byte, len(orig))
	for i := range orig {
		copy(flipped, orig)
		flipped[i] ^= 1 << (i % 8)
		if err := os.WriteFile(part, flipped, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := Dataset(dir, Options{})
		switch {
		case err != nil:
			t.Errorf("byte %d: an error, not a verdict: %v", i, err)
		case rep.Problem == nil:
			t.Errorf("byte %d: the flip went unseen", i)
		}
		readAll(t, dir, i)
	}
}

// readAll reads dir every way the package dataset does, each of which
// may fail on a damaged file but must not panic.
func readAll(t *testing.T, dir string, i int) {
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("byte %d: a reader panicked: %v", i, p)
		}
	}()
	_ = dataset.Scan(dir, func(recs []auditfmt.Record, sources []string) error { return nil })
	_, _, _ = dataset.ReadClient(dir, "dev-0001")
	_, _ = dataset.Parts(dir)
	if r, err := dataset.OpenArrow(dir, 64); err == nil {
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			rec.Release()
		}
		r.Close()
	}
}

// TestProofEveryByteFlip flips the lowest bit of every byte of a proof
// file in turn: each flip is refused, by ParseProof or CheckProof (issue
// 25: two flips of base64 padding bits still verified).
func TestProofEveryByteFlip(t *testing.T) {
	signer, verifiers := testkit.Keys(t, "collector-1")
	dir := filepath.Join(t.TempDir(), "ds")
	ingestLines(t, dir, signer, testkit.GenLines(40, 5, 4))
	p, err := Prove(dir, "stormaudit.test/incident/dev-0002", 3)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := json.MarshalIndent(p, "", "  ") // as stormaudit prove writes it
	if q, err := hashchain.ParseProof(text); err != nil {
		t.Fatal(err)
	} else if _, _, err := hashchain.CheckProof(q, verifiers); err != nil {
		t.Fatal(err)
	}
	flipped := make([]byte, len(text))
	for i := range text {
		copy(flipped, text)
		flipped[i] ^= 1
		q, err := hashchain.ParseProof(flipped)
		if err == nil {
			_, _, err = hashchain.CheckProof(q, verifiers)
		}
		if err == nil {
			t.Errorf("byte %d (%q to %q): the flipped proof verifies", i, text[i], flipped[i])
		}
	}
}
