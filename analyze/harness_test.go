package analyze

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/ingest"

	"github.com/stormaudit/stormaudit/policy"
)

// checkLog ingests the NDJSON log text into a dataset and checks it
// against pol (nil: infer).
func checkLog(t testing.TB, log string, pol *policy.Policy) *Result {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "log.ndjson")
	if err := os.WriteFile(in, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	return checkFiles(t, dir, pol, in)
}

// checkLogWith is checkLog with options.
func checkLogWith(t testing.TB, log string, opts Options) *Result {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "log.ndjson")
	if err := os.WriteFile(in, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	ds := filepath.Join(dir, "ds")
	if _, err := ingest.Run(context.Background(), ds, []ingest.Source{{Name: in}}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := Check(ds, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkFiles ingests the files into a dataset under dir and checks it.
func checkFiles(t testing.TB, dir string, pol *policy.Policy, files ...string) *Result {
	t.Helper()
	ds := filepath.Join(dir, "ds")
	var srcs []ingest.Source
	for _, f := range files {
		srcs = append(srcs, ingest.Source{Name: f})
	}
	if _, err := ingest.Run(context.Background(), ds, srcs, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := Check(ds, Options{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// of returns the findings of rule.
func of(res *Result, rule string) []Finding {
	var out []Finding
	for _, f := range res.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// describe lists findings for a failure message.
func describe(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "\n  %s %s %s: %s (%s)", f.Severity, f.Rule, f.Device, f.Message, f.Explanation)
	}
	return b.String()
}

// TestRuleLogs runs each rule's hand-written logs in testdata/rules/ID/:
// every positive*.ndjson must give at least one finding of rule ID, and
// every negative*.ndjson none. A policy.toml beside them is the declared
// policy; without one the policy is inferred. A positive log may name the
// devices it must flag in a first line comment-free companion file
// positive*.devices (one client_id per line).
func TestRuleLogs(t *testing.T) {
	known := map[string]bool{}
	for _, r := range Rules() {
		known[r.Info().ID] = true
	}
	dirs, err := os.ReadDir("testdata/rules")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		id := d.Name()
		t.Run(id, func(t *testing.T) {
			if !known[id] {
				t.Fatalf("testdata/rules/%s: no rule of that id", id)
			}
			base := filepath.Join("testdata/rules", id)
			var pol *policy.Policy
			if p, err := policy.Load(filepath.Join(base, "policy.toml")); err == nil {
				pol = &p
			} else if !os.IsNotExist(err) && !strings.Contains(err.Error(), "no such file") {
				t.Fatal(err)
			}
			logs, _ := filepath.Glob(filepath.Join(base, "*.ndjson"))
			if len(logs) < 2 {
				t.Fatalf("%s: want a positive and a negative log, found %v", base, logs)
			}
			for _, log := range logs {
				name := filepath.Base(log)
				res := checkFiles(t, t.TempDir(), pol, log)
				got := of(res, id)
				switch {
				case strings.HasPrefix(name, "positive"):
					if len(got) == 0 {
						t.Errorf("%s: no %s finding; all findings:%s\nnotes: %v", name, id, describe(res.Findings), res.Summary.Notes)
					}
					want := devicesFile(t, strings.TrimSuffix(log, ".ndjson")+".devices")
					for _, dev := range want {
						if !slices.ContainsFunc(got, func(f Finding) bool { return f.Device == dev }) {
							t.Errorf("%s: device %s not flagged by %s; got:%s", name, dev, id, describe(got))
						}
					}
				case strings.HasPrefix(name, "negative"):
					if len(got) > 0 {
						t.Errorf("%s: unexpected %s findings:%s", name, id, describe(got))
					}
				}
			}
		})
	}
}

func devicesFile(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}
