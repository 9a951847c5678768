package ingest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
	"github.com/stormaudit/stormaudit/verify"

	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// writeCollectorLog writes n records of 3 devices with hashchain.Writer
// and a signed checkpoint, and returns the log's path and the verifier.
func writeCollectorLog(t *testing.T, n int) (string, note.Verifiers) {
	t.Helper()
	signer, verifiers := testkit.Keys(t, "collector-1")
	path := filepath.Join(t.TempDir(), "collector.log")
	w, _, err := hashchain.OpenWriter(path, hashchain.WriterOptions{Log: "collector.test/gw-1", Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	var d auditfmt.Decoder
	for _, line := range testkit.GenLines(n, 3, 21) {
		var rec auditfmt.Record
		if err := d.Decode([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path, verifiers
}

func TestIngestVerifiesCollectorLogs(t *testing.T) {
	path, verifiers := writeCollectorLog(t, 50)
	dir := filepath.Join(t.TempDir(), "ds")
	m, err := Run(context.Background(), dir, []Source{{Name: path}}, Options{Verifiers: verifiers})
	if err != nil {
		t.Fatal(err)
	}
	c := m.Inputs[0].Collector
	if c == nil || c.Log != "collector.test/gw-1" || c.Records != 50 || !c.SignaturesChecked || c.Unsealed != 0 {
		t.Fatalf("collector = %+v", c)
	}
	if m.Totals.Accepted+m.Totals.Duplicates != 50 || m.Totals.Rejected != 0 {
		t.Errorf("totals = %+v", m.Totals)
	}
	// Each row keeps its collector chain position in its envelope.
	_, rows := readDataset(t, dir)
	for _, r := range rows {
		if _, _, _, ok, err := hashchain.ParseChainEnvelope(r.Envelope); !ok || err != nil {
			t.Fatalf("row %+v: envelope %q is not a chain position", r, r.Envelope)
		}
	}
	if rep, err := verify.Dataset(dir, verify.Options{}); err != nil || rep.Problem != nil {
		t.Errorf("dataset from a collector log: %s", rep.Problem)
	}

	// A collector log changed after it was written is refused, by line.
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), `"attempt":`, `"attempt":1`, 1)), 0o644)
	_, err = Run(context.Background(), filepath.Join(t.TempDir(), "ds2"), []Source{{Name: path}}, Options{Verifiers: verifiers})
	if err == nil || !strings.Contains(err.Error(), "collector log that does not verify") || !strings.Contains(err.Error(), ":1") {
		t.Fatalf("tampered collector log: err = %v", err)
	}
}
