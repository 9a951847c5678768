// Command stormaudit-beam runs stormaudit's check on Apache Beam: the same
// rules, the same findings and the same text, JSON and SARIF as
// stormaudit check, over a dataset partitioned by device (stormaudit
// ingest --buckets N), with the buckets checked in parallel on the
// runner's workers. Its front end is check's (package cmd/internal/front):
// the same stormaudit.toml, flags, refusals and exit status. See
// docs/scale.md.
//
// Usage:
//
//	stormaudit-beam check [--config F] [--policy P] [--format F] [--output O] [runner flags] DATASET
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
	"slices"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	beamlog "github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/cmd/internal/front"
	"github.com/stormaudit/stormaudit/report"
)

const usage = `usage: stormaudit-beam check [flags] DATASET

Runs every rule of stormaudit check over DATASET (a dataset directory,
flat or written by stormaudit ingest --buckets N) as an Apache Beam
pipeline: one bundle per bucket, then one stage that merges them. It
reads stormaudit.toml as check does (here or in the nearest directory
above, or --config FILE; --no-config for none), and the variables
STORMAUDIT_CONFIG, _POLICY, _FORMAT, _OUTPUT and _FAIL_ON. Exit status:
0 no finding at or above --fail-on; 1 findings at or above it; 2 usage,
input or pipeline errors.

Flags (and Beam's own: --runner, --endpoint, --environment_type, ...):
`

// version is set by a release build (-ldflags "-X main.version=v1.2.3"),
// as stormaudit's is.
var version = ""

// formats are the output formats this driver writes: check's but junit
// and github.
var formats = []string{"text", "json", "sarif"}

var (
	configFlag = flag.String("config", "", "the configuration file (default: stormaudit.toml here or in the nearest directory above)")
	noConfig   = flag.Bool("no-config", false, "read no configuration file")
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
	err := run(os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stormaudit-beam:", err)
	}
	os.Exit(exitStatus(err))
}

// failingError is run's error when the check found findings at or above
// --fail-on.
type failingError struct{ error }

// exitStatus is the exit status of run's error, as stormaudit check's: 0
// for none, 1 for findings at or above --fail-on (a failingError), and 2
// for any other: a usage, input or pipeline error.
func exitStatus(err error) int {
	var fe failingError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &fe):
		return 1
	}
	return 2
}

// run runs the command line args; exitStatus says the exit status of the
// error it returns.
func run(args []string, stdout io.Writer) error {
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), usage)
		flag.PrintDefaults()
	}
	if len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if err := flag.CommandLine.Parse(args); err != nil {
			return err
		}
		if worker := flag.Lookup("worker"); worker != nil && worker.Value.String() == "true" {
			// a runner that starts workers of its own (Dataflow, or a
			// DOCKER or PROCESS environment) starts this binary with
			// Beam's flags (--worker=true --id=...): beam.Init runs the
			// worker harness, and then waits to be killed
			go exitWithParent()
			beamlog.LogLevel = *logLevel
			beam.Init()
			return nil
		}
		args = flag.Args() // flags before the command
	}
	if len(args) == 0 || args[0] != "check" {
		flag.Usage()
		return errors.New("expected the command check")
	}
	rest, err := parseFlags(args[1:])
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return fmt.Errorf("check: expected one DATASET, found %d arguments", len(rest))
	}
	beamlog.LogLevel = *logLevel
	beam.Init() // after the flags are parsed: it reads Beam's
	if f := flag.Lookup("async"); f != nil && f.Value.String() == "true" {
		return errors.New("check: --async: the result is read once the job is done; run it synchronously")
	}
	c, parts, cleanup, err := configure(rest[0])
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	Build(s, c, parts)
	if err := beamx.Run(context.Background(), p); err != nil {
		return fmt.Errorf("check: the pipeline failed: %w", err)
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

// configure reads the configuration, the flags and the dataset's
// manifest into the pipeline's configuration, as check reads its own;
// it returns the number of parts too.
func configure(dir string) (Config, int, func(), error) {
	set := setFlags()
	cfg, err := front.LoadConfig(*configFlag, *noConfig)
	if err != nil {
		return Config{}, 0, nil, err
	}
	if err := front.ApplyConfig(cfg, set, true); err != nil {
		return Config{}, 0, nil, err
	}
	opts, err := front.Options("check", cfg, *policyFlag, *windowFlag)
	if err != nil {
		return Config{}, 0, nil, err
	}
	outs, err := front.ParseOutputs(*formatFlag, *outputFlag, formats)
	if err != nil {
		return Config{}, 0, nil, err
	}
	failOn, err := front.ParseFailOn(*failOnFlag)
	if err != nil {
		return Config{}, 0, nil, err
	}
	// the last stage writes the outputs: none may overwrite what the
	// check reads
	inputs := []string{dir, front.PolicyFile(*policyFlag), front.ConfigPath(*configFlag, *noConfig)}
	if err := front.RefuseClobber("check: --output", front.Paths(outs), inputs); err != nil {
		return Config{}, 0, nil, err
	}
	c := Config{Name: dir, Window: opts.Window, Disabled: opts.Disabled, Severity: opts.Severity, Thresholds: opts.Thresholds,
		Outputs: outs, FailOn: failOn, MaxResults: *maxResults, PerRule: *perRule, Version: front.Version(version)}
	if opts.Policy != nil {
		c.Policy, c.PolicyName = string(opts.Policy.AppendTOML(nil)), opts.PolicyName // as TOML, whatever the file was
	}
	if c.Dataset, err = filepath.Abs(dir); err != nil {
		return c, 0, nil, err
	}
	if c.WorkingDir, err = os.Getwd(); err != nil {
		return c, 0, nil, err
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
	if front.Inside(work, c.Dataset) {
		return c, 0, nil, fmt.Errorf("check: --work_dir: %s is in the dataset %s, which the check reads; write it elsewhere", work, dir)
	}
	// a directory of this run's own: no earlier or concurrent run's
	// result is taken for this one's, and no file of the user's is touched
	run, err := os.MkdirTemp(work, "stormaudit-beam-")
	if err != nil {
		return c, 0, nil, fmt.Errorf("check: --work_dir: %w", err)
	}
	cleanup := func() { os.RemoveAll(run) }
	c.Status, c.Stdout = filepath.Join(run, "status"), filepath.Join(run, "stdout")
	for i, o := range c.Outputs {
		if o.Path == "-" {
			c.Outputs[i].Path = c.Stdout
		} else if c.Outputs[i].Path, err = filepath.Abs(o.Path); err != nil { // the workers' working directory is not this one
			return c, 0, cleanup, err
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

// setFlags returns the flags the command line set, after setting from
// the environment those it left unset that check reads from there too.
func setFlags() flagSet {
	set := flagSet{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for name, env := range front.EnvVars {
		if v, ok := os.LookupEnv(env); ok && !set[name] {
			if err := flag.Set(name, v); err == nil {
				set[name] = true
			}
		}
	}
	return set
}

// flagSet is the command line's flags as the configuration sets them:
// the names of those the command line or the environment set.
type flagSet map[string]bool

func (set flagSet) Has(name string) bool { return flag.Lookup(name) != nil }

// IsSet reports whether the command line or the environment set the
// flag; an empty string (an empty variable) sets nothing, as for check.
func (set flagSet) IsSet(name string) bool {
	f := flag.Lookup(name)
	if f == nil || !set[name] {
		return false
	}
	s, isString := f.Value.(flag.Getter).Get().(string)
	return !isString || s != ""
}

// Set sets a flag from the configuration. Of check's flags this driver
// lacks, it ignores those that change nothing it writes (annotations, for
// the github format; max-rejects, for raw logs) and refuses those that
// would change the findings.
func (set flagSet) Set(name, value string) error {
	switch name {
	case "annotations", "max-rejects":
		return nil
	case "baseline":
		return &front.NotTakenError{Why: "stormaudit-beam reads no baseline (stormaudit check does), and would report the findings it holds: " +
			"give stormaudit-beam a --config without it, or --no-config"}
	case "broker-log", "broker-log-format", "broker-log-tz":
		return &front.NotTakenError{Why: "stormaudit-beam reads no --broker-log (it judges the broker logs stored in the dataset: stormaudit ingest --broker-log): " +
			"give stormaudit-beam a --config without it, or --no-config"}
	}
	return flag.Set(name, value)
}

func (set flagSet) Kind(name string) string {
	if f := flag.Lookup(name); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			return front.KindOf(g.Get())
		}
	}
	return front.KindOf("")
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

// finish copies what went to stdout and returns a failingError when the
// exit status the last stage wrote is 1.
func finish(c Config, stdout io.Writer) error {
	st, err := os.ReadFile(c.Status)
	if err != nil {
		return fmt.Errorf("check: the pipeline ended without a result: %w", err)
	}
	var code, failing int
	if _, err := fmt.Sscan(string(st), &code, &failing); err != nil {
		return fmt.Errorf("check: %s: %w", c.Status, err)
	}
	if code != 0 && code != 1 {
		return fmt.Errorf("check: %s: expected the exit status 0 or 1, found %d", c.Status, code)
	}
	for _, o := range c.Outputs {
		if o.Path == c.Stdout {
			f, err := os.Open(o.Path)
			if err != nil {
				return err
			}
			_, err = io.Copy(stdout, f)
			f.Close()
			if err != nil {
				return err
			}
		}
	}
	if code != 0 {
		return failingError{front.Failing(failing, c.FailOn)}
	}
	return nil
}
