package analyze

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/brokerlog"
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
	return checkFilesWith(t, dir, Options{Policy: pol}, files...)
}

// checkFilesWith is checkFiles with options.
func checkFilesWith(t testing.TB, dir string, opts Options, files ...string) *Result {
	t.Helper()
	ds := filepath.Join(dir, "ds")
	var srcs []ingest.Source
	for _, f := range files {
		srcs = append(srcs, ingest.Source{Name: f})
	}
	if _, err := ingest.Run(context.Background(), ds, srcs, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := Check(ds, opts)
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

// TestRuleLogs runs each rule's hand-written logs in testdata/rules/ID/,
// for every rule of the catalogue (a rule without logs fails, and so does
// a folder that names no rule): every positive*.ndjson must give at least
// one finding of rule ID, and every negative*.ndjson none, and there must
// be at least one of each. A policy.toml beside them is the declared
// policy; without one the policy is inferred. A log NAME.ndjson is
// checked with the broker log NAME-broker.log beside it, if there is one;
// a rule that needs a broker log needs one for every log. A positive log
// may name the devices it must flag in a companion file NAME.devices
// (client ids separated by white space).
func TestRuleLogs(t *testing.T) {
	known := map[string]bool{}
	for _, r := range Rules() {
		info := r.Info()
		known[info.ID] = true
		t.Run(info.ID, func(t *testing.T) { ruleLogs(t, info.ID, info.NeedsBrokerLog) })
	}
	dirs, err := os.ReadDir("testdata/rules")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !known[d.Name()] {
			t.Errorf("testdata/rules/%s: no rule of that id", d.Name())
		}
	}
}

// ruleLogs checks the logs of rule id (TestRuleLogs).
func ruleLogs(t *testing.T, id string, needsBroker bool) {
	base := filepath.Join("testdata/rules", id)
	var pol *policy.Policy
	if p, err := policy.Load(filepath.Join(base, "policy.toml")); err == nil {
		pol = &p
	} else if !os.IsNotExist(err) && !strings.Contains(err.Error(), "no such file") {
		t.Fatal(err)
	}
	pos, _ := filepath.Glob(filepath.Join(base, "positive*.ndjson"))
	neg, _ := filepath.Glob(filepath.Join(base, "negative*.ndjson"))
	if len(pos) == 0 || len(neg) == 0 {
		t.Fatalf("%s: want a positive and a negative log (positive*.ndjson, negative*.ndjson), found %d and %d", base, len(pos), len(neg))
	}
	for _, log := range append(pos, neg...) {
		name := filepath.Base(log)
		opts := Options{Policy: pol}
		if blog := brokerLogBeside(t, log); blog != nil {
			opts.Broker = []*BrokerLog{blog}
		} else if needsBroker {
			t.Fatalf("%s: %s needs a broker log, and there is no %s beside it", name, id, brokerLogName(log))
		}
		res := checkFilesWith(t, t.TempDir(), opts, log)
		got := of(res, id)
		if strings.HasPrefix(name, "negative") {
			if len(got) > 0 {
				t.Errorf("%s: unexpected %s findings:%s", name, id, describe(got))
			}
			continue
		}
		if len(got) == 0 {
			t.Errorf("%s: no %s finding; all findings:%s\nnotes: %v", name, id, describe(res.Findings), res.Summary.Notes)
		}
		want := devicesFile(t, strings.TrimSuffix(log, ".ndjson")+".devices")
		for _, dev := range want {
			if !slices.ContainsFunc(got, func(f Finding) bool { return f.Device == dev }) {
				t.Errorf("%s: device %s not flagged by %s; got:%s", name, dev, id, describe(got))
			}
		}
	}
}

// brokerLogName names the broker log of the audit log NAME.ndjson:
// NAME-broker.log.
func brokerLogName(log string) string { return strings.TrimSuffix(log, ".ndjson") + "-broker.log" }

// brokerLogBeside reads the broker log of the audit log log, or returns
// nil if there is none.
func brokerLogBeside(t *testing.T, log string) *BrokerLog {
	t.Helper()
	f, err := os.Open(brokerLogName(log))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blog, err := LoadBrokerLog(f, filepath.Base(f.Name()), brokerlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return blog
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
