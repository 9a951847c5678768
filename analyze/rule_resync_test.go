package analyze

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestResyncSampleIncident checks the built-in sample: six of its 48
// devices copied a fixed 5 s timer, and resync must find exactly them.
func TestResyncSampleIncident(t *testing.T) {
	res := checkFiles(t, t.TempDir(), nil, filepath.Join("..", "internal", "demodata", "incident.ndjson"))
	fs := of(res, "resync")
	if len(fs) != 1 {
		t.Fatalf("got %d resync findings, want 1:%s", len(fs), describe(fs))
	}
	f := fs[0]
	if !strings.HasPrefix(f.Message, "6 of 48 devices retry in lockstep") {
		t.Errorf("message %q, want the six fixed-timer devices of 48", f.Message)
	}
	for _, want := range []string{"drew exactly 5.0 s", "dev-0041"} {
		if !strings.Contains(f.Explanation, want) {
			t.Errorf("explanation lacks %q: %s", want, f.Explanation)
		}
	}
	if len(f.Records) == 0 {
		t.Error("the finding names no records")
	}
}
