package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/report"
)

// TestSARIFFingerprintsStable: the SARIF fingerprints of a log's findings
// do not change when the log is named ./f.ndjson instead of f.ndjson, nor
// when every line moves (here: a device's records inserted on top, and
// two lines of one time swapped), so that code scanning keeps each alert
// rather than closing and reopening all of them.
func TestSARIFFingerprintsStable(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "internal", "demodata", "incident.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lines := strings.SplitAfter(string(src), "\n")
	moved := slices.Clone(lines)
	moved[0], moved[1] = moved[1], moved[0] // records of one instant, in the other order
	extra := `{"client_id": "dev-new", "attempt": 0, "backoff_delay_s": 0.5, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:30.000000+00:00"}` + "\n" +
		`{"client_id": "dev-new", "attempt": 0, "backoff_delay_s": 0.0, "outcome": "connected", "clean_session": false, "recorded_at": "2026-11-30T14:17:30.600000+00:00", "session_present": true}` + "\n"
	write := func(name string, ls []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(ls, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := write("f.ndjson", lines)
	second := write("g.ndjson", append([]string{extra}, moved...))
	t.Chdir(dir)
	base := fingerprints(t, "f.ndjson")
	if len(base) < 5 {
		t.Fatalf("%d fingerprints: the log should have several findings", len(base))
	}
	for _, in := range []string{"./f.ndjson", first} {
		if got := fingerprints(t, in); !slices.Equal(got, base) {
			t.Errorf("%s: fingerprints\n%v\nwant those of f.ndjson\n%v", in, got, base)
		}
	}
	// the moved log has its own findings about dev-new, and the others'
	got := fingerprints(t, second)
	for _, fp := range base {
		if !slices.Contains(got, fp) {
			t.Errorf("%s: fingerprint %s of f.ndjson is gone: %v", second, fp, got)
		}
	}
}

// fingerprints checks in with SARIF output and returns its results'
// fingerprints, sorted, after checking that each URI is clean.
func fingerprints(t *testing.T, in string) []string {
	t.Helper()
	code, out, stderr := runArgs(t, "check", "-q", "--fail-on", "none", "--format", "sarif", in)
	if code != 0 {
		t.Fatalf("check %s: exit %d: %s", in, code, stderr)
	}
	return sarifFingerprints(t, out)
}

// sarifFingerprints returns the fingerprints of a SARIF log's results,
// sorted, after checking that each URI is clean.
func sarifFingerprints(t *testing.T, out []byte) []string {
	t.Helper()
	var doc struct {
		Runs []struct {
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
					}
				}
				PartialFingerprints map[string]string
			}
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	var fps []string
	for _, r := range doc.Runs[0].Results {
		if uri := r.Locations[0].PhysicalLocation.ArtifactLocation.URI; strings.HasPrefix(uri, "./") {
			t.Errorf("uri %q, want it cleaned", uri)
		}
		fps = append(fps, r.PartialFingerprints[report.FingerprintKey])
	}
	slices.Sort(fps)
	return fps
}
