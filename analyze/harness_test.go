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
		fmt.Fprintf(&b, "\n  %s %s %s: %s (%s)", f.Severity, f.Kind, f.Device, f.Message, f.Explanation)
	}
	return b.String()
}

// TestRuleLogs runs each rule's hand-written logs in testdata/rules/ID/,
// for every rule of the catalogue (a rule without logs fails, and so does
// a folder that names no rule). Every negative*.ndjson must give no
// finding of rule ID; every positive*.ndjson must give exactly the
// findings its NAME.findings lists (findingsFile): each listed device
// with a finding of each listed kind, and no other device or kind, so a
// rule that flags a device it should not, or reports the right device
// under the wrong kind, fails as surely as one that misses a device. Each
// positive log must also hold a device it does not list, so that a rule
// that flags every device once it fires cannot pass it
// (TestRuleLogsCatchWrongRules). There must be at least one log of each
// sort. A policy.toml beside them is the declared policy; without one the
// policy is inferred. A log NAME.ndjson is checked with the broker log
// NAME-broker.log beside it, if there is one; a rule that needs a broker
// log needs one for every log. Any other file in the folder fails.
func TestRuleLogs(t *testing.T) {
	known := map[string]bool{}
	for _, r := range Rules() {
		info := r.Info()
		known[info.ID] = true
		t.Run(info.ID, func(t *testing.T) {
			for _, l := range ruleLogsOf(t, info.ID, info.NeedsBrokerLog) {
				var devices []string
				opts := l.opts
				opts.Observe = func(d *Device) { devices = append(devices, d.ID) }
				res := checkFilesWith(t, t.TempDir(), opts, l.path)
				got := of(res, info.ID)
				if p := judgeFindings(got, l.want); len(p) > 0 {
					t.Errorf("%s: %s; all %s findings:%s", l.name, strings.Join(p, "; "), info.ID, describe(got))
				}
				if len(l.want) > 0 && !slices.ContainsFunc(devices, func(dev string) bool {
					return !slices.ContainsFunc(l.want, func(w wantFinding) bool { return w.Device == dev })
				}) {
					t.Errorf("%s: every device in it (%s) is listed in %s: add one the rule must not flag, so that a rule that flags every device fails",
						l.name, strings.Join(devices, ", "), filepath.Base(findingsName(l.path)))
				}
				if len(l.want) > 0 && len(got) == 0 {
					t.Logf("%s: notes: %v", l.name, res.Summary.Notes)
				}
			}
		})
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

// ruleLog is one log of a rule's folder under testdata/rules.
type ruleLog struct {
	name, path string
	opts       Options       // the folder's policy and the log's broker log
	want       []wantFinding // the findings it must give: none for a negative log
}

// ruleLogsOf reads the folder of rule id (TestRuleLogs): its logs, in
// the order positive then negative, each with its options and the
// findings it must give. It fails t when the folder is not as
// TestRuleLogs says.
func ruleLogsOf(t *testing.T, id string, needsBroker bool) []ruleLog {
	t.Helper()
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
	known := map[string]bool{filepath.Join(base, "policy.toml"): true}
	var logs []ruleLog
	for _, log := range append(pos, neg...) {
		l := ruleLog{name: filepath.Base(log), path: log, opts: Options{Policy: pol}}
		known[log], known[brokerLogName(log)], known[findingsName(log)] = true, true, true
		if blog := brokerLogBeside(t, log); blog != nil {
			l.opts.Broker = []*BrokerLog{blog}
		} else if needsBroker {
			t.Fatalf("%s: %s needs a broker log, and there is no %s beside it", l.name, id, brokerLogName(log))
		}
		if strings.HasPrefix(l.name, "negative") {
			if _, err := os.Stat(findingsName(log)); err == nil {
				t.Fatalf("%s: a negative log must give no finding, and there is a %s", l.name, findingsName(log))
			}
		} else {
			want, err := findingsFile(findingsName(log), id)
			if os.IsNotExist(err) {
				t.Fatalf("%s: no %s listing the findings it must give", l.name, findingsName(log))
			} else if err != nil {
				t.Fatal(err)
			}
			l.want = want
		}
		logs = append(logs, l)
	}
	files, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if p := filepath.Join(base, f.Name()); !known[p] {
			t.Errorf("%s: not a log, its broker log, its findings or the policy: misnamed?", p)
		}
	}
	return logs
}

// findingsName names the file of the findings the audit log NAME.ndjson
// must give: NAME.findings.
func findingsName(log string) string { return strings.TrimSuffix(log, ".ndjson") + ".findings" }

// wantFinding is a finding a positive log must give: a finding of its
// rule with this Device and Kind.
type wantFinding struct{ Device, Kind string }

// findingsFile reads the findings file path of rule id: one finding a
// line, its device (a client id, a host for spacing, or fleet) and its
// kind (Finding.Kind, "ID/name"), separated by white space. Lines that
// begin with # say why, and are skipped, as are blank lines. A kind of
// another rule, a line listed twice and a file that lists nothing are
// errors.
func findingsFile(path, id string) ([]wantFinding, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var want []wantFinding
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !validKind(id, f[1]) {
			return nil, fmt.Errorf("%s:%d: want a device and a kind of %s (%s/name), found %q", path, i+1, id, id, line)
		}
		w := wantFinding{Device: f[0], Kind: f[1]}
		if slices.Contains(want, w) {
			return nil, fmt.Errorf("%s:%d: %s %s listed twice", path, i+1, w.Device, w.Kind)
		}
		want = append(want, w)
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("%s: lists no finding: a log that must give none is a negative log", path)
	}
	return want, nil
}

// judgeFindings compares the findings a rule gave on one log with those
// it must give, and says what is wrong: each wanted device and kind it
// did not report, and each device and kind it reported that is not
// wanted (a device flagged that must not be, or flagged under another
// kind). Several findings of one device and kind count as one. None: it
// gave exactly what is wanted.
func judgeFindings(got []Finding, want []wantFinding) []string {
	var problems []string
	reported := map[wantFinding]bool{}
	for _, f := range got {
		reported[wantFinding{Device: f.Device, Kind: f.Kind}] = true
	}
	for _, w := range want {
		if !reported[w] {
			problems = append(problems, fmt.Sprintf("no %s finding of %s", w.Kind, w.Device))
		}
	}
	seen := map[wantFinding]bool{}
	for _, f := range got {
		k := wantFinding{Device: f.Device, Kind: f.Kind}
		if seen[k] || slices.Contains(want, k) {
			continue
		}
		seen[k] = true
		if slices.ContainsFunc(want, func(w wantFinding) bool { return w.Device == f.Device }) {
			problems = append(problems, fmt.Sprintf("%s flagged as %s, which is not listed for it", f.Device, f.Kind))
		} else {
			problems = append(problems, fmt.Sprintf("%s flagged (%s), and must not be", f.Device, f.Kind))
		}
	}
	return problems
}

// TestJudgeFindings pins what judgeFindings reports.
func TestJudgeFindings(t *testing.T) {
	want := []wantFinding{{"dev-1", "r/a"}, {"dev-1", "r/b"}, {Fleet, "r/c"}}
	f := func(dev, kind string) Finding { return Finding{Rule: "r", Device: dev, Kind: kind} }
	for _, tc := range []struct {
		name string
		got  []Finding
		want []string // the problems
	}{
		{"exact", []Finding{f("dev-1", "r/a"), f("dev-1", "r/b"), f(Fleet, "r/c")}, nil},
		{"repeated", []Finding{f("dev-1", "r/a"), f("dev-1", "r/a"), f("dev-1", "r/b"), f(Fleet, "r/c"), f(Fleet, "r/c")}, nil},
		{"missing", []Finding{f("dev-1", "r/a"), f(Fleet, "r/c")}, []string{"no r/b finding of dev-1"}},
		{"another device", []Finding{f("dev-1", "r/a"), f("dev-1", "r/b"), f(Fleet, "r/c"), f("dev-2", "r/a"), f("dev-2", "r/a")},
			[]string{"dev-2 flagged (r/a), and must not be"}},
		{"another kind", []Finding{f("dev-1", "r/a"), f("dev-1", "r/b"), f(Fleet, "r/a"), f(Fleet, "r/c")},
			[]string{"fleet flagged as r/a, which is not listed for it"}},
		{"wrong kind", []Finding{f("dev-1", "r/a"), f("dev-1", "r/b"), f(Fleet, "r/d")},
			[]string{"no r/c finding of fleet", "fleet flagged as r/d, which is not listed for it"}},
		{"none", nil, []string{"no r/a finding of dev-1", "no r/b finding of dev-1", "no r/c finding of fleet"}},
	} {
		if got := judgeFindings(tc.got, want); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := judgeFindings([]Finding{f("dev-1", "r/a")}, nil); len(got) != 1 {
		t.Errorf("a finding where none is wanted: got %q, want it reported", got)
	}
}

// flagEvery is a wrong rule: it flags every device it is given, under
// one kind.
type flagEvery struct{ id, kind string }

func (r flagEvery) Info() RuleInfo {
	return RuleInfo{ID: r.id, Severity: Warning, Title: "flags every device"}
}

func (r flagEvery) Device(c *Context, d *Device) {
	c.Report(Finding{Rule: r.id, Kind: r.kind, Severity: Warning, Device: d.ID, Message: "flagged"})
}

func (flagEvery) Finish(*Context) {}

// TestRuleLogsCatchWrongRules holds TestRuleLogs' judgement to the wrong
// rules that a check of the listed devices alone let pass, on every log
// of every rule: beside its own findings, a finding of every device of
// the log under a listed kind (a rule that flags every device once it
// fires: flagEvery, run over the devices the check reads), and its own
// findings under a kind it does not have. judgeFindings must report
// both on every positive log, and flagEvery on every negative one, while
// the rule's own findings pass.
func TestRuleLogsCatchWrongRules(t *testing.T) {
	for _, r := range Rules() {
		info := r.Info()
		t.Run(info.ID, func(t *testing.T) {
			for _, l := range ruleLogsOf(t, info.ID, info.NeedsBrokerLog) {
				every, ec := flagEvery{id: info.ID, kind: info.ID + "/every-device"}, &Context{}
				if l.want != nil {
					every.kind = l.want[0].Kind
				}
				opts := l.opts
				opts.Observe = func(d *Device) { every.Device(ec, d) }
				res := checkFilesWith(t, t.TempDir(), opts, l.path)
				every.Finish(ec)
				own := of(res, info.ID)
				if p := judgeFindings(own, l.want); len(p) > 0 {
					t.Fatalf("%s: the rule itself fails: %q", l.name, p)
				}
				all := slices.Concat(own, ec.findings)
				if p := judgeFindings(all, l.want); !slices.ContainsFunc(p, func(s string) bool { return strings.HasSuffix(s, "and must not be") }) {
					t.Errorf("%s: the rule's findings and one of every device (%d in all) passed: %q", l.name, len(all), p)
				}
				if l.want == nil {
					continue
				}
				wrong := slices.Clone(own)
				for i := range wrong {
					wrong[i].Kind = info.ID + "/not-its-kind"
				}
				p := judgeFindings(wrong, l.want)
				for _, w := range l.want {
					if !slices.Contains(p, fmt.Sprintf("no %s finding of %s", w.Kind, w.Device)) {
						t.Errorf("%s: the rule's findings under another kind: got %q, want %s %s missing", l.name, p, w.Device, w.Kind)
					}
				}
			}
		})
	}
}

// brokerLogName names the broker log of the audit log NAME.ndjson:
// NAME-broker.log.
func brokerLogName(log string) string { return strings.TrimSuffix(log, ".ndjson") + "-broker.log" }

// brokerLogBeside reads the broker log of the audit log log, or returns
// nil if there is none.
func brokerLogBeside(t *testing.T, log string) *BrokerLog {
	t.Helper()
	if _, err := os.Stat(brokerLogName(log)); os.IsNotExist(err) {
		return nil
	}
	return brokerLogFile(t, brokerLogName(log))
}

// brokerLogFile reads the broker log at path.
func brokerLogFile(t *testing.T, path string) *BrokerLog {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blog, err := LoadBrokerLog(f, filepath.Base(path), brokerlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return blog
}
