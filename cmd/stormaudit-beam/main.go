// Command stormaudit-beam runs stormaudit's check on Apache Beam: the same
// rules, the same findings and the same JSON and SARIF as stormaudit
// check, over a dataset partitioned by device (stormaudit ingest
// --buckets N), with the buckets checked in parallel on the runner's
// workers. See docs/scale.md.
//
// Usage:
//
//	stormaudit-beam check [--policy P] [--format F] [--output O] [runner flags] DATASET
//
// The runner is Prism, in process, unless --runner says otherwise
// (--runner=universal --endpoint=HOST:PORT for a Flink, Spark or Prism job
// server; --runner=dataflow for Google Cloud Dataflow).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/report"
)

const usage = `usage: stormaudit-beam check [flags] DATASET

Runs every rule of stormaudit check over DATASET (a dataset directory,
flat or written by stormaudit ingest --buckets N) as an Apache Beam
pipeline: one bundle per bucket, then one stage that merges them. Exit
status: 0 no finding at or above --fail-on; 1 findings at or above it;
2 usage, input or pipeline errors.

Flags (and Beam's own: --runner, --endpoint, --environment_type, ...):
`

var (
	policyFlag = flag.String("policy", "", "the declared policy: a policy file or a preset name (default: inferred from the log)")
	formatFlag = flag.String("format", "text", "comma-separated output formats: text, json, sarif")
	outputFlag = flag.String("output", "", `comma-separated output paths, one per format ("-" for stdout; default "-"); on a cluster, paths the workers can write`)
	failOnFlag = flag.String("fail-on", "error", "exit 1 on findings of this severity or worse: none, info, warning or error")
	windowFlag = flag.Duration("window", analyze.DefaultWindow, "the window socket-opens are counted in for the fleet's figures")
	perRule    = flag.Int("per-rule", report.DefaultPerRule, "findings shown per rule in text (-1: all)")
	maxResults = flag.Int("max-results", report.DefaultSARIFMax, "results in sarif, the worst first (0: all)")
	workDir    = flag.String("work_dir", "", "where the last stage writes what goes to stdout and the exit status (default: a temporary directory; on a cluster, one the workers and this process share)")
	logLevel   = flag.String("beam_log_level", "warn", "Beam's log level: debug, info, warn or error")
)

func main() {
	code, err := run(os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stormaudit-beam:", err)
	}
	os.Exit(code)
}

// run runs the command line args and returns the exit status.
func run(args []string, stdout io.Writer) (int, error) {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usage)
		flag.PrintDefaults()
	}
	if len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if err := flag.CommandLine.Parse(args); err != nil {
			return 2, err
		}
		if worker := flag.Lookup("worker"); worker != nil && worker.Value.String() == "true" {
			// a runner that starts workers of its own (Dataflow, or a
			// DOCKER or PROCESS environment) starts this binary with
			// Beam's flags (--worker=true --id=...): beam.Init runs the
			// worker harness, and then waits to be killed
			go exitWithParent()
			beamlog.LogLevel = *logLevel
			beam.Init()
			return 0, nil
		}
		args = flag.Args() // flags before the command
	}
	if len(args) == 0 || args[0] != "check" {
		flag.Usage()
		return 2, errors.New("expected the command check")
	}
	rest, err := parseFlags(args[1:])
	if err != nil {
		return 2, err
	}
	if len(rest) != 1 {
		return 2, fmt.Errorf("check: expected one DATASET, found %d arguments", len(rest))
	}
	beamlog.LogLevel = *logLevel
	beam.Init() // after the flags are parsed: it reads Beam's
	if f := flag.Lookup("async"); f != nil && f.Value.String() == "true" {
		return 2, errors.New("check: --async: the result is read once the job is done; run it synchronously")
	}
	c, parts, cleanup, err := configure(rest[0])
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return 2, err
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, c, parts)
	if err := beamx.Run(context.Background(), p); err != nil {
		return 2, fmt.Errorf("check: the pipeline failed: %w", err)
	}
	return finish(c, stdout)
}

// exitWithParent exits once the process that started this one is gone: a
// worker whose boot program was killed (Beam's harness, done, waits to be
// killed itself) is not left behind.
func exitWithParent() {
	parent := os.Getppid()
	for range time.Tick(time.Second) {
		if os.Getppid() != parent {
			os.Exit(0)
		}
	}
}

// parseFlags parses the flags in args, before and after the arguments
// (all that follows "--" is arguments), and returns the arguments.
func parseFlags(args []string) ([]string, error) {
	var after []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, after = args[:i], args[i+1:]
	}
	var rest []string
	for {
		if err := flag.CommandLine.Parse(args); err != nil {
			return nil, err
		}
		args = flag.Args()
		if len(args) == 0 {
			return append(rest, after...), nil
		}
		rest, args = append(rest, args[0]), args[1:]
	}
}

// configure reads the dataset's manifest, and the flags, into the
// pipeline's configuration; it returns the number of parts too.
func configure(dir string) (Config, int, func(), error) {
	c := Config{Window: *windowFlag, MaxResults: *maxResults, PerRule: *perRule, Version: version()}
	if c.Window <= 0 {
		return c, 0, nil, fmt.Errorf("check: --window: expected a duration > 0, found %v", c.Window)
	}
	var err error
	c.Name = dir
	if c.Dataset, err = filepath.Abs(dir); err != nil {
		return c, 0, nil, err
	}
	if c.FailOn, err = parseFailOn(*failOnFlag); err != nil {
		return c, 0, nil, err
	}
	if *policyFlag != "" {
		p, err := policy.Resolve(*policyFlag)
		if err != nil {
			return c, 0, nil, fmt.Errorf("check: --policy: %w", err)
		}
		c.Policy, c.PolicyName = string(p.AppendTOML(nil)), *policyFlag // as TOML, whatever the file was
	}
	work := *workDir
	if work == "" && !local() {
		return c, 0, nil, errors.New("check: --work_dir: this runner's workers write the result elsewhere: give a directory they and this process share")
	}
	if work == "" {
		work = os.TempDir()
	}
	if work, err = filepath.Abs(work); err != nil {
		return c, 0, nil, err
	}
	// the last stage writes these: none may land in the dataset it reads
	if c.Outputs, err = outputs(*formatFlag, *outputFlag); err != nil {
		return c, 0, nil, err
	}
	for _, p := range append([]string{work}, outputPaths(c.Outputs)...) {
		if inside(p, c.Dataset) {
			return c, 0, nil, fmt.Errorf("check: --output or --work_dir: %s is in the dataset %s, which the check reads; write it elsewhere", p, dir)
		}
	}
	if pf, err := os.Stat(*policyFlag); *policyFlag != "" && err == nil { // a policy file, not a preset
		for _, p := range outputPaths(c.Outputs) {
			if of, err := os.Stat(p); err == nil && os.SameFile(of, pf) {
				return c, 0, nil, fmt.Errorf("check: --output: %s would overwrite the input %s (the policy); write it elsewhere", p, *policyFlag)
			}
		}
	}
	// a directory of this run's own: no earlier or concurrent run's
	// result is taken for this one's, and no file of the user's is touched
	run, err := os.MkdirTemp(work, "stormaudit-beam-")
	if err != nil {
		return c, 0, nil, fmt.Errorf("check: --work_dir: %w", err)
	}
	cleanup := func() { os.RemoveAll(run) }
	c.Status, c.Stdout = filepath.Join(run, "status"), filepath.Join(run, "stdout")
	for i := range c.Outputs {
		if c.Outputs[i].Path == "-" {
			c.Outputs[i].Path = c.Stdout
		}
	}
	// the driver reads the dataset too: a bad one fails here, named,
	// before any worker starts
	s, err := c.split()
	if err != nil {
		return c, 0, cleanup, fmt.Errorf("check: %w", err)
	}
	c.Inference = s.Inference()
	return c, s.Parts(), cleanup, nil
}

// outputs pairs the formats with the output paths, absolute, "-" for
// stdout.
func outputs(formats, paths string) ([]Output, error) {
	fs := strings.Split(formats, ",")
	ps := strings.Split(paths, ",")
	if paths == "" {
		ps = slices.Repeat([]string{"-"}, len(fs))
	}
	if len(ps) != len(fs) {
		return nil, fmt.Errorf("check: --output: expected one path per format (%d), found %d", len(fs), len(ps))
	}
	var outs []Output
	stdout := false
	for i, f := range fs {
		f, p := strings.TrimSpace(f), strings.TrimSpace(ps[i])
		if !slices.Contains([]string{"text", "json", "sarif"}, f) {
			return nil, fmt.Errorf("check: --format: expected text, json or sarif, found %q", f)
		}
		if p == "-" {
			if stdout {
				return nil, errors.New("check: --output: two formats go to stdout; give --output a file for all but one")
			}
			stdout = true
		} else {
			var err error
			if p, err = filepath.Abs(p); err != nil {
				return nil, err
			}
		}
		outs = append(outs, Output{Format: f, Path: p})
	}
	return outs, nil
}

// outputPaths returns the paths of outs' files.
func outputPaths(outs []Output) []string {
	var ps []string
	for _, o := range outs {
		if o.Path != "-" {
			ps = append(ps, o.Path)
		}
	}
	return ps
}

// inside reports whether path (absolute) is dir (absolute) or in it.
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// local reports whether the workers run in this process, and so can
// write the result to its temporary directory: Prism or the direct runner
// in process (no --endpoint), or a job server with the LOOPBACK
// environment.
func local() bool {
	value := func(name string) string {
		if f := flag.Lookup(name); f != nil {
			return strings.ToLower(f.Value.String())
		}
		return ""
	}
	env := value("environment_type")
	switch value("runner") {
	case "", "prism", "prismrunner":
		return value("endpoint") == "" && (env == "" || env == "loopback")
	case "direct", "directrunner":
		return true
	case "universal", "portable", "portablerunner", "flink", "spark":
		return env == "loopback"
	}
	return false
}

// parseFailOn reads --fail-on.
func parseFailOn(s string) (analyze.Severity, error) {
	s = strings.ToLower(s) // as check takes it
	if s == "none" {
		return analyze.Error + 1, nil
	}
	sev, ok := analyze.ParseSeverity(s)
	if !ok {
		return 0, fmt.Errorf("check: --fail-on: expected none, info, warning or error, found %q", s)
	}
	return sev, nil
}

// finish copies what went to stdout and returns the exit status the last
// stage wrote.
func finish(c Config, stdout io.Writer) (int, error) {
	st, err := os.ReadFile(c.Status)
	if err != nil {
		return 2, fmt.Errorf("check: the pipeline ended without a result: %w", err)
	}
	var code, failing int
	if _, err := fmt.Sscan(string(st), &code, &failing); err != nil {
		return 2, fmt.Errorf("check: %s: %w", c.Status, err)
	}
	for _, o := range c.Outputs {
		if o.Path == c.Stdout {
			f, err := os.Open(o.Path)
			if err != nil {
				return 2, err
			}
			_, err = io.Copy(stdout, f)
			f.Close()
			if err != nil {
				return 2, err
			}
		}
	}
	if code != 0 {
		noun := "findings"
		if failing == 1 {
			noun = "finding"
		}
		return code, fmt.Errorf("check: %d %s at or above --fail-on %s", failing, noun, *failOnFlag)
	}
	return 0, nil
}

// version returns the version of the stormaudit module this binary was
// built with (devel for a replaced one), and the revision of the tree,
// for SARIF's tool.driver.version.
func version() string {
	v := "devel"
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	for _, d := range info.Deps {
		if d.Path == "github.com/stormaudit/stormaudit" && d.Replace == nil && d.Version != "" {
			v = d.Version
		}
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}
