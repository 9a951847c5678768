package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/report"
)

// TestBaseline: a check against the baseline of a log reports only what
// is new since, keeps the fingerprints SARIF gave those findings without
// a baseline, and exits by what it reports; a file that is no baseline is
// refused, naming it.
func TestBaseline(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "internal", "demodata", "incident.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("old.ndjson", src, 0o644); err != nil {
		t.Fatal(err)
	}
	// the same log and a device retrying with no delay at all: new findings
	var hot strings.Builder
	for i := range 6 {
		hot.WriteString(`{"client_id": "dev-hot", "attempt": ` + string(rune('0'+i)) + `, "backoff_delay_s": 0.0, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:3` + string(rune('0'+i)) + `.000000+00:00"}` + "\n")
		hot.WriteString(`{"client_id": "dev-hot", "attempt": ` + string(rune('0'+i)) + `, "backoff_delay_s": 0.0, "outcome": "attempt_failed", "clean_session": false, "recorded_at": "2026-11-30T14:17:3` + string(rune('0'+i)) + `.100000+00:00"}` + "\n")
	}
	if err := os.WriteFile("new.ndjson", append(slices.Clone(src), hot.String()...), 0o644); err != nil {
		t.Fatal(err)
	}

	// recording a baseline succeeds whatever it holds (issue 26: it exited 1)
	code, _, stderr := runArgs(t, "check", "--write-baseline", "base.json", "old.ndjson")
	if code != 0 || !strings.Contains(stderr, "wrote a baseline of 8 findings to base.json") {
		t.Fatalf("write: exit %d, %s", code, stderr)
	}
	code, out, stderr := runArgs(t, "check", "--baseline", "base.json", "old.ndjson")
	if code != 0 || !strings.Contains(string(out), "findings: none") || !strings.Contains(stderr, "8 findings in the baseline base.json not reported") {
		t.Errorf("the same log: exit %d, want 0 and no findings; stderr %s\n%s", code, stderr, out)
	}

	all := fingerprints(t, "new.ndjson")
	code, out, _ = runArgs(t, "check", "-q", "--baseline", "base.json", "--format", "json", "new.ndjson")
	if code != 1 {
		t.Errorf("new findings: exit %d, want 1", code)
	}
	if got := string(out); !strings.Contains(got, `"device":"dev-hot"`) || strings.Contains(got, `"device":"dev-0041"`) {
		t.Errorf("with the baseline: want dev-hot's findings and none of the old:\n%s", got)
	}
	_, sarif, _ := runArgs(t, "check", "-q", "--fail-on", "none", "--baseline", "base.json", "--format", "sarif", "new.ndjson")
	kept := strings.Count(string(sarif), `"`+report.FingerprintKey+`":`)
	if kept == 0 || kept >= len(all) {
		t.Fatalf("%d of %d findings kept", kept, len(all))
	}
	for _, fp := range sarifFingerprints(t, sarif) {
		if !slices.Contains(all, fp) {
			t.Errorf("fingerprint %s under the baseline is not the finding's own", fp)
		}
	}

	os.WriteFile("bad.json", []byte(`{"version": 9, "fingerprint": "stormauditFinding/v3", "findings": []}`), 0o644)
	if code, _, stderr := runArgs(t, "check", "--baseline", "bad.json", "old.ndjson"); code != 2 || !strings.Contains(stderr, "--baseline: bad.json: version: expected 1, found 9") {
		t.Errorf("bad baseline: exit %d, %s", code, stderr)
	}
}
