package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/cmd/internal/demodata"
	"github.com/stormaudit/stormaudit/cmd/internal/front"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/report"
	"github.com/stormaudit/stormaudit/simulate"
)

// The test binary is the command too: with STORMAUDIT_BEAM_MAIN set it
// runs main, so that each test runs the command in a process of its own,
// flags and all, as a user does; and started as a Beam worker (by Beam's
// boot program, which passes flags, not this environment) it is one.
func TestMain(m *testing.M) {
	worker := slices.ContainsFunc(os.Args[1:], func(a string) bool { return strings.HasPrefix(a, "--worker=") })
	if os.Getenv("STORMAUDIT_BEAM_MAIN") == "1" || worker {
		main()
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// beamCheck runs stormaudit-beam check with args and returns its stdout,
// stderr and exit status.
func beamCheck(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runIn(t, "", nil, os.Args[0], append([]string{"check"}, args...)...)
}

// runIn runs bin with args in dir ("" for this one), in this process's
// environment but stormaudit's own variables, with env added, and
// returns its stdout, stderr and exit status. The test binary is
// stormaudit-beam.
func runIn(t *testing.T, dir string, env []string, bin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a job that hangs fails
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STORMAUDIT_") { // a developer's STORMAUDIT_FAIL_ON, say
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, "STORMAUDIT_BEAM_MAIN=1"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 10 * time.Second // what it started may hold its output open
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// ingestLogs ingests logs into a new dataset of n buckets.
func ingestLogs(t *testing.T, n int, logs ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	var srcs []ingest.Source
	for _, l := range logs {
		srcs = append(srcs, ingest.Source{Name: l})
	}
	if _, err := ingest.Run(context.Background(), dir, srcs, ingest.Options{Buckets: n}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkJSON is what stormaudit check --format json writes for dir.
func checkJSON(t *testing.T, dir string, opts analyze.Options) (string, *analyze.Result) {
	t.Helper()
	res, err := analyze.Check(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.JSON(&b, res); err != nil {
		t.Fatal(err)
	}
	return b.String(), res
}

// sameAsCheck fails t unless the pipeline's JSON for dir is check's.
func sameAsCheck(t *testing.T, dir, pol string, extra ...string) *analyze.Result {
	t.Helper()
	var opts analyze.Options
	args := []string{"--no-config", "--format", "json", "--fail-on", "none"}
	if pol != "" {
		p, err := policy.Resolve(pol)
		if err != nil {
			t.Fatal(err)
		}
		opts.Policy, opts.PolicyName = &p, pol
		args = append(args, "--policy", pol)
	}
	want, res := checkJSON(t, dir, opts)
	got, stderr, code := beamCheck(t, append(append(args, extra...), dir)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got != want {
		t.Errorf("%s: the pipeline's JSON differs from check's:\n%s", dir, firstDiff(got, want))
	}
	return res
}

// firstDiff shows the first line that differs.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\nbeam  %s\ncheck %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("beam %d lines, check %d", len(g), len(w))
}

// On the demo's incident, flat and in buckets, the pipeline finds what
// check finds: the same JSON, byte for byte.
func TestDemoSameAsCheck(t *testing.T) {
	log := filepath.Join(t.TempDir(), "incident.ndjson")
	if err := os.WriteFile(log, demodata.Incident, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 4} {
		res := sameAsCheck(t, ingestLogs(t, n, log), "")
		if len(res.Findings) == 0 {
			t.Errorf("%d buckets: no findings on the demo's incident", n)
		}
	}
	// a policy file in JSON travels to the workers too
	p, err := policy.Preset("full-jitter")
	if err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(t.TempDir(), "fleet.json")
	if err := os.WriteFile(js, p.AppendJSON(nil), 0o644); err != nil {
		t.Fatal(err)
	}
	sameAsCheck(t, ingestLogs(t, 2, log), js)

	// a stray part file that verify refuses is said, once, by both
	ds := ingestLogs(t, 2, log)
	man, err := dataset.ReadManifest(ds)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(ds, filepath.FromSlash(man.Files[0].Name)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ds, "part-stray.parquet"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	res := sameAsCheck(t, ds, "")
	n := 0
	for _, note := range res.Summary.Notes {
		if strings.Contains(note, "part-stray.parquet is not part of the dataset") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("notes %q: want one naming the stray part file", res.Summary.Notes)
	}
}

// On the logs real MQTT clients wrote against a real broker.
func TestRealClientsSameAsCheck(t *testing.T) {
	dirs, _ := filepath.Glob("../../testdata/realclients/*/clients.ndjson")
	if len(dirs) == 0 {
		t.Fatal("no real-client corpus")
	}
	for _, log := range dirs {
		t.Run(filepath.Base(filepath.Dir(log)), func(t *testing.T) {
			sameAsCheck(t, ingestLogs(t, 4, log), filepath.Join(filepath.Dir(log), "policy.toml"))
		})
	}
	// with the broker's log stored beside the audit: the second witness
	// read by every worker
	log := "../../testdata/realclients/paho-py-library/clients.ndjson"
	blog, err := os.ReadFile(filepath.Join(filepath.Dir(log), "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "dsb")
	if _, err := ingest.Run(context.Background(), dir, []ingest.Source{{Name: log}},
		ingest.Options{Buckets: 4, BrokerLogs: []ingest.BrokerSource{{Name: "broker.log", Data: blog}}}); err != nil {
		t.Fatal(err)
	}
	res := sameAsCheck(t, dir, filepath.Join(filepath.Dir(log), "policy.toml"))
	if res.Summary.Fleet.Witness == nil || res.Summary.ByRule["unaudited-connect"] == 0 {
		t.Errorf("the stored broker log was not judged: witness %v, by rule %v", res.Summary.Fleet.Witness != nil, res.Summary.ByRule)
	}
	// a broker's log and fires kept that name devices: the parts keep
	// their ids then, and the ids the fires want are not asked of them
	blog, err = os.ReadFile("../../analyze/testdata/witness/positive-broker.log")
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), "dsr")
	if _, err := ingest.Run(context.Background(), dir, []ingest.Source{{Name: "../../analyze/testdata/rules/resync/positive.ndjson"}},
		ingest.Options{Buckets: 3, BrokerLogs: []ingest.BrokerSource{{Name: "broker.log", Data: blog}}}); err != nil {
		t.Fatal(err)
	}
	if res := sameAsCheck(t, dir, ""); res.Summary.ByRule["resync"] == 0 {
		t.Errorf("resync found nothing beside a broker's log: by rule %v", res.Summary.ByRule)
	}
}

// On a simulated fleet of thousands of devices in 16 buckets, in text
// and SARIF too, and with the exit status check gives.
func TestFleetSameAsCheck(t *testing.T) {
	log := filepath.Join(t.TempDir(), "sim.ndjson")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := policy.Preset("fixed")
	_, err = simulate.Run(context.Background(), simulate.Config{Devices: 3000, Outage: time.Minute, Seed: 3, Policy: p,
		BadAuth: 0.02, DevicesPerHost: 4, Flaps: 1, FlapUp: 2 * time.Second, FlapDown: 5 * time.Second, OutboxPerS: 0.5}, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := ingestLogs(t, 16, log)
	res := sameAsCheck(t, dir, "full-jitter")
	if len(res.Summary.ByRule) < 4 {
		t.Errorf("findings of %d rules only: %v", len(res.Summary.ByRule), res.Summary.ByRule)
	}
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, code := beamCheck(t, "--policy", "full-jitter", "--format", "text,sarif", "--output", "-,"+out+".sarif", dir)
	if code != 1 || !strings.Contains(stderr, "at or above --fail-on error") {
		t.Errorf("exit %d, want 1 (error findings): %s", code, stderr)
	}
	var text bytes.Buffer
	if err := report.Text(&text, res, report.TextOptions{PerRule: report.DefaultPerRule}); err != nil {
		t.Fatal(err)
	}
	if stdout != text.String() {
		t.Errorf("text differs from check's:\n%s", firstDiff(stdout, text.String()))
	}
	var sarif bytes.Buffer
	if err := report.SARIF(&sarif, res, report.SARIFOptions{ExitCode: 1, Version: front.Version(version), MaxResults: report.DefaultSARIFMax}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(out + ".sarif"); err != nil || string(got) != sarif.String() {
		t.Errorf("sarif differs from check's (%v):\n%s", err, firstDiff(string(got), sarif.String()))
	}
}

// Submitted through the portable job API to Prism running as a job
// server of its own, as a Flink or Spark job server is used, the
// pipeline finds what check finds.
func TestJobServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the Prism job server")
	}
	bin := filepath.Join(t.TempDir(), "prism")
	goBuild(t, bin, "github.com/apache/beam/sdks/v2/go/cmd/prism")
	job := freePort(t)
	// it shuts itself down if this test dies before its cleanup
	prism := exec.Command(bin, "--job_port", job, "--serve_http=false", "--idle_shutdown_timeout=2m")
	// a file, not a pipe: the workers prism starts inherit it and outlive it
	logs, err := os.Create(filepath.Join(t.TempDir(), "prism.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logs.Close()
	prism.Stdout, prism.Stderr = logs, logs
	prism.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its workers with it
	if err := prism.Start(); err != nil {
		t.Fatal(err)
	}
	// boot copies the worker binary into a /tmp/binNNN of its own choosing
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "bin*", "worker"))
	t.Cleanup(func() {
		syscall.Kill(-prism.Process.Pid, syscall.SIGKILL)
		prism.Wait()
		after, _ := filepath.Glob(filepath.Join(os.TempDir(), "bin*", "worker"))
		for _, w := range after {
			if !slices.Contains(before, w) {
				os.RemoveAll(filepath.Dir(w))
			}
		}
		if t.Failed() {
			t.Logf("prism: %s", readLog(logs.Name()))
		}
	})
	endpoint := "localhost:" + job
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.Dial("tcp", endpoint)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prism did not listen on %s: %v\n%s", endpoint, err, readLog(logs.Name()))
		}
		time.Sleep(100 * time.Millisecond)
	}
	log := filepath.Join(t.TempDir(), "incident.ndjson")
	if err := os.WriteFile(log, demodata.Incident, 0o644); err != nil {
		t.Fatal(err)
	}
	ds := ingestLogs(t, 4, log)
	sameAsCheck(t, ds, "", "--runner", "universal", "--endpoint", endpoint, "--environment_type", "LOOPBACK")

	// the PROCESS environment: Beam's boot program starts a worker process
	// of its own, this binary with Beam's flags, as a DOCKER environment
	// or Dataflow does in a container
	boot := filepath.Join(t.TempDir(), "boot")
	goBuild(t, boot, "github.com/apache/beam/sdks/v2/go/container")
	// Prism 2.77 passes the worker id quoted (--id='...'), without a
	// shell; and boot stages what it fetches in --semi_persist_dir (/tmp)
	wrapper := filepath.Join(t.TempDir(), "boot.sh")
	script := "#!/bin/sh\nfor a in \"$@\"; do set -- \"$@\" \"$(printf %s \"$a\" | tr -d \"'\")\"; shift; done\nexec " + boot +
		" --semi_persist_dir=" + t.TempDir() + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	sameAsCheck(t, ds, "", "--runner", "universal", "--endpoint", endpoint, "--environment_type", "PROCESS",
		"--environment_config", `{"command":"`+wrapper+`"}`, "--worker_binary", os.Args[0], "--work_dir", t.TempDir())
}

// goBuild builds pkg, a package of Beam, into bin.
func goBuild(t *testing.T, bin, pkg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
}

// readLog returns the log file's text.
func readLog(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// freePort returns a TCP port nothing listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

// Bad input fails before any worker starts, with exit status 2 and an
// error that names what was wrong.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "incident.ndjson")
	if err := os.WriteFile(log, demodata.Incident, 0o644); err != nil {
		t.Fatal(err)
	}
	ds := ingestLogs(t, 0, log)
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("delay = \"sometimes\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(dir, "fleet.toml")
	fleet, _ := policy.Preset("full-jitter")
	if err := os.WriteFile(pol, fleet.AppendTOML(nil), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{filepath.Join(dir, "none")}, "none/manifest.json"},
		{[]string{"--format", "xml", dir}, `--format: expected text, json or sarif, found "xml"`},
		{[]string{"--format", "json,sarif", dir}, "check: --output: json and sarif both go to stdout; give --output a file for all but one"},
		{[]string{"--policy", bad, dir}, "bad.toml"},
		{[]string{"--fail-on", "loud", dir}, `--fail-on: expected none, info, warning or error, found "loud"`},
		{[]string{}, "expected one DATASET, found 0"},
		{[]string{"--window", "0s", dir}, "--window: expected a duration > 0"},
		{[]string{"--async", dir}, "--async: the result is read once the job is done"},
		{[]string{"--output", filepath.Join(ds, "manifest.json"), ds}, "would overwrite the input " + ds},
		{[]string{"--work_dir", filepath.Join(ds, "tmp"), ds}, "is in the dataset"},
		{[]string{"--policy", pol, "--output", pol, ds}, "would overwrite the input"},
		{[]string{"--runner", "dataflow", dir}, "--work_dir: this runner's workers write the result elsewhere"},
		{[]string{"--runner", "prism", "--endpoint", "localhost:1", dir}, "--work_dir: this runner's workers write the result elsewhere"},
	} {
		_, stderr, code := beamCheck(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestExitStatus pins the one place run's error becomes the exit
// status: 1 only for findings at or above --fail-on, 2 for every other
// error, as stormaudit check.
func TestExitStatus(t *testing.T) {
	findings := failingError{errors.New("check: 3 findings at or above --fail-on error")}
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{findings, 1},
		{fmt.Errorf("wrapped: %w", findings), 1},
		{errors.New("check: expected one DATASET, found 0 arguments"), 2},
		{flag.ErrHelp, 2},
	} {
		if got := exitStatus(c.err); got != c.want {
			t.Errorf("exitStatus(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// binDir holds the stormaudit binary that stormaudit builds.
var binDir string

// stormaudit builds stormaudit, check's own driver, from the tree this
// module's requirement is replaced by, once per test binary. Without the
// VCS stamp, as this test binary is built: both say they are "devel".
var stormaudit = sync.OnceValues(func() (string, error) {
	var err error
	if binDir, err = os.MkdirTemp("", "stormaudit-beam-test-"); err != nil {
		return "", err
	}
	bin := filepath.Join(binDir, "stormaudit")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=false", "-o", bin, "./cmd/stormaudit")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building stormaudit: %v\n%s", err, out)
	}
	return bin, nil
})

// driver is one of the two commands that run check.
type driver struct {
	name, bin string
}

// outcome is what a driver did: its stdout, its messages on stderr (without
// the program's name) and its exit status.
type outcome struct {
	stdout   string
	messages []string
	code     int
}

// check runs the driver's check with args in dir, with env added.
func (d driver) check(t *testing.T, dir string, env []string, args ...string) outcome {
	t.Helper()
	stdout, stderr, code := runIn(t, dir, env, d.bin, append([]string{"check"}, args...)...)
	r := outcome{stdout: stdout, code: code}
	for _, line := range strings.Split(stderr, "\n") {
		if msg, ok := strings.CutPrefix(line, d.name+": "); ok { // not Beam's own logging
			r.messages = append(r.messages, msg)
		}
	}
	return r
}

// drivers returns stormaudit check and stormaudit-beam check.
func drivers(t *testing.T) []driver {
	t.Helper()
	sa, err := stormaudit()
	if err != nil {
		t.Fatal(err)
	}
	return []driver{{"stormaudit", sa}, {"stormaudit-beam", os.Args[0]}}
}

// sameRuns fails t unless both drivers did the same, and returns what.
func sameRuns(t *testing.T, what string, runs []outcome) outcome {
	t.Helper()
	check, beam := runs[0], runs[1]
	if beam.code != check.code || !slices.Equal(beam.messages, check.messages) {
		t.Errorf("%s: stormaudit-beam exit %d %q, stormaudit check exit %d %q", what, beam.code, beam.messages, check.code, check.messages)
	}
	if beam.stdout != check.stdout {
		t.Errorf("%s: stdout differs:\n%s", what, firstDiff(beam.stdout, check.stdout))
	}
	return check
}

// With a stormaudit.toml that disables a rule, gives another a severity
// of its own, sets a rule's threshold and a flag of [check], the two
// drivers write the same bytes in text, JSON and SARIF and exit alike:
// the file found from the working directory up, named by --config and by
// STORMAUDIT_CONFIG; both refuse two outputs that are one file, with the
// same message; an empty --fail-on is the default, or the file's; and a
// mistake in the file is the same error.
func TestConfigSameAsCheck(t *testing.T) {
	ds := drivers(t)
	repo := t.TempDir()
	work := filepath.Join(repo, "work")
	for _, d := range []string{".git", "work/logs", "out-stormaudit", "out-stormaudit-beam"} {
		if err := os.MkdirAll(filepath.Join(repo, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(work, "logs", "incident.ndjson") // under the working directory: named relative to it
	if err := os.WriteFile(log, demodata.Incident, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Run(context.Background(), filepath.Join(repo, "ds"), []ingest.Source{{Name: log}}, ingest.Options{Buckets: 4}); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(repo, "stormaudit.toml")
	files := map[string]string{
		conf: `[rules]
disable = ["audit-gap"]

[rules.resync]
repeats = 1

[severity]
delay-bounds = "error"

[check]
per-rule = 2
`,
		filepath.Join(repo, "lenient.toml"): "[check]\nfail-on = \"none\"\n",
		filepath.Join(repo, "typo.toml"):    "[severity]\nspacin = \"error\"\n",
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	each := func(fn func(d driver) outcome) []outcome {
		var runs []outcome
		for _, d := range ds {
			runs = append(runs, fn(d))
		}
		return runs
	}

	// found from the working directory up: text on stdout, JSON and
	// SARIF to files
	runs := each(func(d driver) outcome {
		out := filepath.Join("..", "out-"+d.name)
		return d.check(t, work, nil, "--format", "text,json,sarif", "--output", "-,"+out+"/check.json,"+out+"/check.sarif", "../ds")
	})
	got := sameRuns(t, "found", runs)
	if got.code != 1 || !slices.Contains(got.messages, "check: 7 findings at or above --fail-on error") {
		t.Errorf("found: exit %d %q, want 1 for resync's error and delay-bounds' six", got.code, got.messages)
	}
	if !strings.Contains(got.stdout, "and 4 more delay-bounds findings") || !strings.Contains(got.stdout, "records: logs/incident.ndjson:") {
		t.Errorf("found: per-rule = 2 not applied, or the log named otherwise:\n%s", got.stdout)
	}
	for _, name := range []string{"check.json", "check.sarif"} {
		want, err := os.ReadFile(filepath.Join(repo, "out-stormaudit", name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(repo, "out-stormaudit-beam", name))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(want) {
			t.Errorf("%s differs:\n%s", name, firstDiff(string(b), string(want)))
		}
		if name == "check.json" {
			// the file had its effect: against the check without it
			js := string(want)
			plain := ds[0].check(t, work, nil, "--no-config", "--format", "json", "../ds").stdout
			for _, c := range []struct {
				without, with string // with "": gone
			}{
				{`"rule":"audit-gap"`, ""},
				{`"rule":"delay-bounds","kind":"delay-bounds/delay-outside-bounds","severity":"warning"`, `"rule":"delay-bounds","kind":"delay-bounds/delay-outside-bounds","severity":"error"`},
				{"at 2 or more attempts", "at 1 or more attempts"},
			} {
				if !strings.Contains(plain, c.without) || strings.Contains(js, c.without) || !strings.Contains(js, c.with) {
					t.Errorf("the configuration did not turn %s into %q", c.without, c.with)
				}
			}
		}
	}

	// named by --config and by STORMAUDIT_CONFIG, from a directory with none
	elsewhere := t.TempDir()
	if err := os.Mkdir(filepath.Join(elsewhere, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	dsAbs := filepath.Join(repo, "ds")
	sameRuns(t, "--config", each(func(d driver) outcome {
		return d.check(t, elsewhere, nil, "--config", conf, "--format", "json", dsAbs)
	}))
	got = sameRuns(t, "STORMAUDIT_CONFIG", each(func(d driver) outcome {
		return d.check(t, elsewhere, []string{"STORMAUDIT_CONFIG=" + conf}, "--format", "sarif", dsAbs)
	}))
	if strings.Contains(got.stdout, `"ruleId":"audit-gap"`) {
		t.Error("STORMAUDIT_CONFIG: audit-gap ran")
	}

	// two outputs that are one file: refused, and nothing written
	got = sameRuns(t, "a.json,./a.json", each(func(d driver) outcome {
		return d.check(t, work, nil, "--format", "json,sarif", "--output", "a.json,./a.json", "../ds")
	}))
	if got.code != 2 || !slices.Equal(got.messages, []string{"check: --output: ./a.json is given twice"}) {
		t.Errorf("a.json,./a.json: exit %d %q, want 2 and the same refusal", got.code, got.messages)
	}
	if _, err := os.Stat(filepath.Join(work, "a.json")); err == nil {
		t.Error("a.json,./a.json: a.json written")
	}

	// an empty --fail-on (or STORMAUDIT_FAIL_ON) sets nothing: the
	// default, error, or the file's
	for _, c := range []struct {
		name string
		env  []string
		args []string
		code int
	}{
		{"--fail-on ''", nil, []string{"--fail-on", ""}, 1},
		{"STORMAUDIT_FAIL_ON=", []string{"STORMAUDIT_FAIL_ON="}, nil, 1},
		{"--fail-on '' under fail-on = none", nil, []string{"--config", "../lenient.toml", "--fail-on", ""}, 0},
	} {
		got := sameRuns(t, c.name, each(func(d driver) outcome {
			return d.check(t, work, c.env, append(c.args, "--format", "json", "../ds")...)
		}))
		if got.code != c.code {
			t.Errorf("%s: exit %d, want %d", c.name, got.code, c.code)
		}
	}

	// a mistake in the file: the same error
	got = sameRuns(t, "typo", each(func(d driver) outcome {
		return d.check(t, work, nil, "--config", "../typo.toml", "../ds")
	}))
	if got.code != 2 || len(got.messages) != 1 || !strings.Contains(got.messages[0], `typo.toml:2: severity.spacin: expected a rule id`) {
		t.Errorf("typo: exit %d %q", got.code, got.messages)
	}
}

// A [check] key that would change the findings, which stormaudit-beam
// does not take (a baseline, a broker log), is refused, named; one that
// changes nothing it writes is ignored.
func TestConfigNotTaken(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "incident.ndjson")
	if err := os.WriteFile(log, demodata.Incident, 0o644); err != nil {
		t.Fatal(err)
	}
	ds := ingestLogs(t, 0, log)
	for _, c := range []struct{ file, want string }{
		{"[check]\nbaseline = \"base.json\"\n", "refused.toml:2: check.baseline: stormaudit-beam reads no baseline"},
		{"[check]\nbroker-log = \"broker.log\"\n", "refused.toml:2: check.broker-log: stormaudit-beam reads no --broker-log"},
	} {
		conf := filepath.Join(dir, "refused.toml")
		if err := os.WriteFile(conf, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := beamCheck(t, "--config", conf, ds)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d %q, want 2 and %q", c.file, code, stderr, c.want)
		}
	}
	conf := filepath.Join(dir, "ignored.toml")
	if err := os.WriteFile(conf, []byte("[check]\nannotations = 3\nmax-rejects = 5\nfail-on = \"none\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := beamCheck(t, "--config", conf, ds); code != 0 {
		t.Errorf("annotations and max-rejects: exit %d %q, want 0", code, stderr)
	}
}

// What is put back for a part no partial holds is an error, named.
func TestPutBacksLeftOver(t *testing.T) {
	pb := putBacks{details: map[int][]byte{}, recovered: map[int][]byte{7: {1}}, named: map[int][]byte{}}
	if err := pb.left(); err == nil || !strings.Contains(err.Error(), "recovered devices of parts [7]") {
		t.Errorf("recovered devices of part 7, no partial: err = %v", err)
	}
	delete(pb.recovered, 7)
	if err := pb.left(); err != nil {
		t.Errorf("nothing left: err = %v", err)
	}
}
