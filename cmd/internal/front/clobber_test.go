package front

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRefuseClobber(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, f := range []string{"in.ndjson", "ds/manifest.json"} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("in.ndjson", "link.ndjson"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		out, in string
		refused bool
	}{
		{"in.ndjson", "in.ndjson", true},
		{"./in.ndjson", filepath.Join(dir, "in.ndjson"), true},
		{"link.ndjson", "in.ndjson", true},
		{"ds/manifest.json", "ds", true},
		{"ds/new/out.json", "ds", true},
		{"out.json", "in.ndjson", false},
		{"dsx.json", "ds", false},
		{"-", "-", false},
	} {
		err := RefuseClobber("check: --output", []string{tt.out}, []string{"", tt.in})
		if (err != nil) != tt.refused {
			t.Errorf("%s over %s: %v, want refused %v", tt.out, tt.in, err, tt.refused)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "check: --output: the output "+tt.out+" would overwrite the input "+tt.in) {
			t.Errorf("%s over %s: %v", tt.out, tt.in, err)
		}
	}
	if PolicyFile("full-jitter") != "" || PolicyFile("in.ndjson") != "in.ndjson" {
		t.Error("PolicyFile: a preset is no file, a file is")
	}
}
