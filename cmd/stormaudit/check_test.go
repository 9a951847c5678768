package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/cmd/internal/front"
	"github.com/urfave/cli/v3"
)

// TestFrontKeys: the keys of a configuration's [check] table and the
// environment variables stormaudit-beam reads are check's, as its
// flags define them.
func TestFrontKeys(t *testing.T) {
	check := checkCommand()
	if got := configurable(check); !slices.Equal(got, front.CheckKeys) {
		t.Errorf("check's configurable flags are %q, front.CheckKeys %q", got, front.CheckKeys)
	}
	app := newApp(nil, nil, nil)
	for name, env := range front.EnvVars {
		f := flagNamed(check, name)
		if f == nil {
			f = flagNamed(app, name)
		}
		var sources []string
		if s, ok := f.(*cli.StringFlag); ok {
			sources = s.Sources.EnvKeys()
		}
		if !slices.Equal(sources, []string{env}) {
			t.Errorf("--%s: check reads %q, front.EnvVars names %s", name, sources, env)
		}
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
