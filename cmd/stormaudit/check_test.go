package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stormaudit/stormaudit/analyze"
)

func TestCheckOutputs(t *testing.T) {
	for _, tt := range []struct {
		formats, outputs string
		want             []checkOutput
		err              string
	}{
		{"", "", []checkOutput{{"text", "-"}}, ""},
		{"json", "", []checkOutput{{"json", "-"}}, ""},
		{"text, sarif", "-, out.sarif", []checkOutput{{"text", "-"}, {"sarif", "out.sarif"}}, ""},
		{"sarif,junit", "a.sarif,b.xml", []checkOutput{{"sarif", "a.sarif"}, {"junit", "b.xml"}}, ""},
		{"xml", "", nil, `check: --format: expected text, json, sarif, junit or github, found "xml"`},
		{"text,json", "", nil, "check: --output: text and json both go to stdout; give --output a file for all but one"},
		{"text,json", "a", nil, "check: --output: expected one path per format (2), found 1"},
		{"json,sarif", "a,a", nil, "check: --output: a is given twice"},
	} {
		got, err := checkOutputs(tt.formats, tt.outputs)
		if tt.err != "" {
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 2 || err.Error() != tt.err {
				t.Errorf("checkOutputs(%q, %q): err %v, want exit 2: %s", tt.formats, tt.outputs, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("checkOutputs(%q, %q) = %v, %v; want %v", tt.formats, tt.outputs, got, err, tt.want)
		}
	}
}

func TestExitStatus(t *testing.T) {
	res := &analyze.Result{Findings: []analyze.Finding{{Severity: analyze.Warning}, {Severity: analyze.Info}, {Severity: analyze.Info}}}
	for _, tt := range []struct {
		failOn        string
		code, failing int
	}{{"none", 0, 0}, {"error", 0, 0}, {"", 0, 0}, {"warning", 1, 1}, {"info", 1, 3}} {
		sev, err := parseFailOn(tt.failOn)
		if err != nil {
			t.Fatal(err)
		}
		if code, failing := exitStatus(res, sev); code != tt.code || failing != tt.failing {
			t.Errorf("--fail-on %q: exit %d with %d failing, want %d with %d", tt.failOn, code, failing, tt.code, tt.failing)
		}
	}
	if _, err := parseFailOn("fatal"); err == nil {
		t.Error("--fail-on fatal accepted")
	}
}

// TestSettle: a temporary dataset's files are not named, and absolute
// inputs under the working directory become relative.
func TestSettle(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(wd), "elsewhere.ndjson")
	res := &analyze.Result{Dataset: "/tmp/x", Files: []string{"/tmp/x/part-00000.parquet"},
		Sources: []string{filepath.Join(wd, "logs", "a.ndjson"), "b.ndjson", "-", outside}}
	(&input{dir: "/tmp/x", temp: true}).settle(res)
	want := []string{filepath.Join("logs", "a.ndjson"), "b.ndjson", "-", outside}
	if res.Dataset != "" || res.Files != nil || !slices.Equal(res.Sources, want) {
		t.Errorf("got %q %q %q, want no dataset and sources %q", res.Dataset, res.Files, res.Sources, want)
	}
}
