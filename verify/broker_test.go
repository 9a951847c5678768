package verify

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
)

// brokerLines is a Mosquitto log with one line it cannot read.
const brokerLines = "1796126400: mosquitto version 2.0.11 running\n" +
	"1796126401: New client connected from 127.0.0.1:40001 as dev-0001 (p2, c0, k30).\n" +
	"not a Mosquitto line\n" +
	"1796126460: Client dev-0001 disconnected.\n"

// ingestWithBroker ingests generated records with brokerLines stored
// beside them.
func ingestWithBroker(t *testing.T, opts ingest.Options) (string, *dataset.Manifest, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	src := ingest.Source{Name: testkit.WriteInput(t, "a.ndjson", testkit.GenLines(40, 5, 3))}
	opts.Log = "stormaudit.test/incident"
	opts.BrokerLogs = []ingest.BrokerSource{{Name: "mosquitto.log", Data: []byte(brokerLines)}}
	m, err := ingest.Run(context.Background(), dir, []ingest.Source{src}, opts)
	return dir, m, err
}

// TestBrokerLogStored: ingest --broker-log keeps the broker's log byte
// for byte with its rejected line, the manifest (signed) lists both with
// their digests and accounting, verify checks them, and any edit, removal
// or addition under broker/ is tampering; under --strict the rejected
// line stops the ingest.
func TestBrokerLogStored(t *testing.T) {
	signer, verifiers := testkit.Keys(t, "collector-1")
	dir, m, err := ingestWithBroker(t, ingest.Options{Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.BrokerLogs) != 1 {
		t.Fatalf("manifest broker_logs %+v", m.BrokerLogs)
	}
	b := m.BrokerLogs[0]
	if b.Name != "mosquitto.log" || b.Format != "mosquitto" || b.Lines != 4 || b.Events != 3 || b.Rejected != 1 || b.TZ != "UTC" {
		t.Errorf("broker log entry %+v", b)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(b.File))); string(got) != brokerLines {
		t.Errorf("stored %q, want the log byte for byte", got)
	}
	rj, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(b.RejectsFile)))
	var r struct {
		Line int
		Text string
	}
	if err := json.Unmarshal(rj, &r); err != nil || r.Line != 3 || r.Text != "not a Mosquitto line" {
		t.Errorf("rejects file %q: %v", rj, err)
	}
	rep := mustVerify(t, dir, Options{Verifiers: verifiers})
	if rep.Problem != nil || !rep.ManifestSigned || len(rep.BrokerLogs) != 1 {
		t.Fatalf("intact dataset: problem %v, manifest signed %v, broker logs %v", rep.Problem, rep.ManifestSigned, rep.BrokerLogs)
	}
	for _, tc := range []struct {
		name string
		edit func(dir string)
		what string
	}{
		{"a line added", func(dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, filepath.FromSlash(b.File)), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("1796126470: New client connected from 10.0.0.9:1 as dev-0001 (p2, c0, k30).\n")
			f.Close()
		}, "SHA-256"},
		{"its rejects emptied", func(dir string) { os.WriteFile(filepath.Join(dir, filepath.FromSlash(b.RejectsFile)), nil, 0o644) }, "SHA-256"},
		{"removed", func(dir string) { os.Remove(filepath.Join(dir, filepath.FromSlash(b.File))) }, "missing"},
		{"another log added", func(dir string) { os.WriteFile(filepath.Join(dir, "broker", "01.log"), []byte(brokerLines), 0o644) }, "not part of the dataset"},
	} {
		dir, _, err := ingestWithBroker(t, ingest.Options{Signer: signer})
		if err != nil {
			t.Fatal(err)
		}
		tc.edit(dir)
		rep := mustVerify(t, dir, Options{Verifiers: verifiers})
		if rep.Problem == nil || !strings.Contains(rep.Problem.String(), tc.what) {
			t.Errorf("%s: problem %v, want one saying %q", tc.name, rep.Problem, tc.what)
		}
		// the file changed is what the problem names, and no broker log is
		// said to match the manifest beside it
		if tc.what == "SHA-256" && (!strings.HasPrefix(rep.Problem.File, "broker/") || len(rep.BrokerLogs) != 0) {
			t.Errorf("%s: problem filed under %q, broker logs said to match %v; want the broker file named and none matching", tc.name, rep.Problem.File, rep.BrokerLogs)
		}
	}
	if _, _, err := ingestWithBroker(t, ingest.Options{Strict: true}); err == nil || !strings.Contains(err.Error(), "mosquitto.log:3") {
		t.Errorf("--strict with a rejected broker log line: %v, want an error naming mosquitto.log:3", err)
	}
}

// TestVerifyThroughSymlink: a dataset reached through a symlink to its
// directory (link, not link/) verifies as the directory does (issue 25:
// "checkpoint: missing").
func TestVerifyThroughSymlink(t *testing.T) {
	dir, _, err := ingestWithBroker(t, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, link, Options{}); rep.Problem != nil {
		t.Errorf("through %s: %v", link, rep.Problem)
	}
}

// TestVerifyChecksTheInputs: an unsigned manifest's inputs[] edited apart
// from its totals is inconsistent (issue 25: only the totals were
// checked).
func TestVerifyChecksTheInputs(t *testing.T) {
	dir, _, err := ingestWithBroker(t, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, dataset.ManifestName)
	b, _ := os.ReadFile(path)
	var m map[string]any
	json.Unmarshal(b, &m)
	in := m["inputs"].([]any)[0].(map[string]any)
	in["accepted"], in["rejected"] = in["accepted"].(float64)-1, in["rejected"].(float64)+1
	b, _ = json.MarshalIndent(m, "", "  ")
	os.WriteFile(path, append(b, '\n'), 0o644)
	if rep := mustVerify(t, dir, Options{}); rep.Problem == nil || !strings.Contains(rep.Problem.What, "inputs:") {
		t.Errorf("an edited input's counts: %v", rep.Problem)
	}
}
