package verify

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"

	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/hashchain"
)

// The holes a hostile tester found in verify (issue 10): each edit below
// left every row intact or made verify fail with an I/O error, and each
// is now tampering, with the problem named.
func TestVerifyHostileEdits(t *testing.T) {
	signer, verifiers := testkit.Keys(t, "collector-1")
	lines := testkit.GenLines(300, 200, 7)
	fresh := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "ds")
		ingestLines(t, dir, signer, lines)
		return dir
	}
	part := "part-00000.parquet"
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, dir string)
		file string // the problem's file
		what string // in the problem's text
	}{
		{"footer statistic edited", func(t *testing.T, dir string) {
			// the client_id max statistic and created_by: rows untouched
			path := filepath.Join(dir, part)
			b, _ := os.ReadFile(path)
			i := bytes.LastIndex(b, []byte("dev-0199"))
			if i < 0 {
				t.Fatal("no dev-0199 in the file")
			}
			copy(b[i:], "dev-0099")
			os.WriteFile(path, b, 0o644)
		}, part, "SHA-256"},
		{"unlisted part copied in", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, part))
			os.WriteFile(filepath.Join(dir, "part-00001.parquet"), b, 0o644)
		}, "part-00001.parquet", "not part of the dataset"},
		{"stray file", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
		}, "notes.txt", "not part of the dataset"},
		{"listed part deleted", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, part))
		}, part, "missing"},
		{"listed part cut short", func(t *testing.T, dir string) {
			path := filepath.Join(dir, part)
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)/2], 0o644)
		}, part, "SHA-256"}, // changed since ingest: tampering before a parse error
		{"manifest not JSON", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, dataset.ManifestName), []byte("{not json"), 0o644)
		}, dataset.ManifestName, "not a dataset manifest"},
		{"manifest removed", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, dataset.ManifestName))
		}, dataset.ManifestName, "missing"},
		{"checkpoint signature line twice", func(t *testing.T, dir string) {
			path := filepath.Join(dir, dataset.CheckpointName)
			b, _ := os.ReadFile(path)
			sig := b[bytes.LastIndex(b[:len(b)-1], []byte("\n"))+1:]
			os.WriteFile(path, append(b, sig...), 0o644)
		}, dataset.CheckpointName, "appears twice"},
		{"checkpoint cosigned by another key", func(t *testing.T, dir string) {
			path := filepath.Join(dir, dataset.CheckpointName)
			b, _ := os.ReadFile(path)
			n, err := note.Open(b, verifiers)
			if err != nil {
				t.Fatal(err)
			}
			other, _ := testkit.Keys(t, "mallory")
			both, err := note.Sign(&note.Note{Text: n.Text}, signer, other)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(path, both, 0o644)
		}, dataset.CheckpointName, "which no verifier names"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fresh(t)
			tc.edit(t, dir)
			rep := mustVerify(t, dir, Options{Verifiers: verifiers})
			if rep.Problem == nil || rep.Problem.File != tc.file || !strings.Contains(rep.Problem.What, tc.what) {
				t.Errorf("problem %v; want one of %q saying %q", rep.Problem, tc.file, tc.what)
			}
		})
	}
}

// TestVerifyPinsTheLog: two datasets of one directory name, signed by one
// key, both verify; --log tells them apart.
func TestVerifyPinsTheLog(t *testing.T) {
	signer, verifiers := testkit.Keys(t, "collector-1")
	in := testkit.WriteInput(t, "a.ndjson", testkit.GenLines(20, 3, 1))
	var logs []string
	for _, parent := range []string{"a", "b"} {
		dir := filepath.Join(t.TempDir(), parent, "incident")
		m, err := ingest.Run(t.Context(), dir, []ingest.Source{{Name: in}}, ingest.Options{Signer: signer})
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, m.Log)
		if rep := mustVerify(t, dir, Options{Verifiers: verifiers, Log: m.Log}); rep.Problem != nil {
			t.Fatalf("intact: %v", rep.Problem)
		}
		if parent == "b" {
			rep := mustVerify(t, dir, Options{Verifiers: verifiers, Log: logs[0]})
			if rep.Problem == nil || !strings.Contains(rep.Problem.What, "another dataset than the one expected") {
				t.Errorf("the second dataset pinned to the first's log: %v", rep.Problem)
			}
		}
	}
	if logs[0] == logs[1] {
		t.Errorf("both datasets are log %q", logs[0])
	}
}

// TestEveryCheckpointReaderAgrees: a checkpoint file that one reader
// refuses, every reader refuses (a regression: the dataset's reader
// skipped the canonical-signature check the collector log's made).
func TestEveryCheckpointReaderAgrees(t *testing.T) {
	signer, verifiers := testkit.Keys(t, "collector-1")
	good, err := hashchain.SignCheckpoint(hashchain.Checkpoint{Origin: "o", Size: 0}, signer)
	if err != nil {
		t.Fatal(err)
	}
	// the signature's base64 with its padding taken off: decodes, not canonical
	bad := bytes.Replace(good, []byte("=\n"), []byte("\n"), 1)
	for _, vs := range []note.Verifiers{nil, verifiers} {
		if _, err := hashchain.ReadCheckpointFile(bad, vs); err == nil {
			t.Errorf("verifiers %v: a non-canonical signature accepted", vs != nil)
		}
	}
}
