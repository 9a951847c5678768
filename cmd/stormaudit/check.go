package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/cmd/internal/front"
	"github.com/stormaudit/stormaudit/ingest"

	"github.com/urfave/cli/v3"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/report"
)

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "check the reconnect rules on a dataset or on audit logs",
		ArgsUsage: "INPUT...",
		Description: `Runs every reconnect rule (--format json lists them, with what each flags)
over INPUT: one dataset directory, or audit logs (NDJSON, CSV, gzip, "-" for
stdin), which are first ingested into a temporary dataset; lines rejected at
ingest are findings of the audit-gap rule. The policy is --policy (a file or
a preset), or else what the log shows, reported as inferred.

--format takes a comma-separated list of text, json, sarif, junit and github
(GitHub Actions annotations); --output a list of as many paths ("-" for
stdout, at most once): --format text,sarif --output -,check.sarif.

Exit status: 0 no finding at or above --fail-on; 1 findings at or above it;
2 usage, input or I/O errors.`,
		OnUsageError: onUsageError,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "policy", Usage: "the declared policy: a policy file or a preset name (default: inferred from the log)", Sources: cli.EnvVars("STORMAUDIT_POLICY")},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "comma-separated output formats: text, json, sarif, junit, github", Sources: cli.EnvVars("STORMAUDIT_FORMAT")},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: `comma-separated output paths, one per format ("-" for stdout; default "-")`, Sources: cli.EnvVars("STORMAUDIT_OUTPUT")},
			&cli.StringFlag{Name: "fail-on", Value: "error", Usage: "exit 1 on findings of this severity or worse: none, info, warning or error", Sources: cli.EnvVars("STORMAUDIT_FAIL_ON")},
			&cli.DurationFlag{Name: "window", Value: analyze.DefaultWindow, Usage: "the window socket-opens are counted in for the fleet's figures"},
			&cli.IntFlag{Name: "per-rule", Value: report.DefaultPerRule, Usage: "findings shown per rule in text (-1: all)"},
			&cli.IntFlag{Name: "annotations", Value: report.DefaultGitHubMax, Usage: "findings annotated in github (-1: all)"},
			&cli.Int64Flag{Name: "max-rejects", Value: ingest.DefaultMaxRejects, Usage: "raw logs: stop, exit 2, once more lines than this are rejected (-1: no limit)", Sources: cli.EnvVars("STORMAUDIT_MAX_REJECTS")},
			&cli.StringFlag{Name: "baseline", Usage: "report only the findings absent from this baseline file", Sources: cli.EnvVars("STORMAUDIT_BASELINE"), TakesFile: true},
			&cli.StringFlag{Name: "write-baseline", Usage: "write every finding of this check to a baseline file", TakesFile: true},
			&cli.IntFlag{Name: "max-results", Value: report.DefaultSARIFMax, Usage: "results in sarif, the worst first (0: all; GitHub keeps 5,000 of a run with more than 25,000)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no ingest summary", Sources: boolEnv("STORMAUDIT_QUIET")},
		}, append(brokerFlags(), windowFlags()...)...),
		Action: runCheck,
	}
}

func runCheck(ctx context.Context, cmd *cli.Command) error {
	opts, err := checkOptions(cmd, "check") // first: the configuration sets flags
	if err != nil {
		return err
	}
	opts.Context = ctx // a signal stops the check between two devices
	outs, err := front.ParseOutputs(cmd.String("format"), cmd.String("output"), front.Formats)
	if err != nil {
		return err
	}
	opts.LazyExplanations = explainsAsWritten(cmd, outs)
	failOn, err := front.ParseFailOn(cmd.String("fail-on"))
	if err != nil {
		return usageErr("%s", strings.Replace(err.Error(), "--fail-on", flagOrigin(cmd, "fail-on"), 1))
	}
	paths := front.Paths(outs)
	if err := front.RefuseClobber("check: --output", paths, append(cmd.Args().Slice(), sideInputs(cmd)...)); err != nil {
		return err
	}
	// a baseline is an input too, and the one written is an output
	wb, base := cmd.String("write-baseline"), cmd.String("baseline")
	if err := front.RefuseClobber("check: --output", paths, []string{base, wb}); err != nil {
		return err
	}
	if err := front.RefuseClobber("check: --write-baseline", []string{wb}, append(cmd.Args().Slice(), slices.DeleteFunc(sideInputs(cmd), func(s string) bool { return s == base })...)); err != nil {
		return err
	}
	res, in, err := checkInput(ctx, cmd, opts)
	if in != nil {
		defer in.close()
	}
	if err != nil {
		return err
	}
	in.settle(res)
	if err := applyBaseline(cmd, res, in); err != nil {
		return err
	}
	code, failing := front.ExitStatus(res, failOn)
	if wb != "" && base == "" {
		code = 0 // recording a baseline, with none to hold the findings to: it succeeded
	}
	if err := writeOutputs(cmd, outs, res, in, code, failOn); err != nil {
		return err
	}
	if code != 0 {
		return verdict(front.Failing(failing, failOn))
	}
	return nil
}

// explainsAsWritten reports whether every output can be left to write
// the findings' explanations itself: JSON writes each straight into its
// encoding, on every core, with no string of its own, and text with
// --per-rule and github with --annotations print only some findings
// (front.Render's writers read them with Finding.Explained). SARIF,
// JUnit and text of every finding write them one at a time as they
// print, and are better served by explanations written as the devices
// are read, beside the rest of that work.
func explainsAsWritten(cmd *cli.Command, outs []front.Output) bool {
	for _, o := range outs {
		switch {
		case o.Format == "json":
		case o.Format == "text" && cmd.Int("per-rule") >= 0:
		case o.Format == "github" && cmd.Int("annotations") >= 0:
		default:
			return false
		}
	}
	return true
}

// checkOptions reads the configuration, --window and --policy of the
// command called name, and for check the [check] table.
func checkOptions(cmd *cli.Command, name string) (analyze.Options, error) {
	c, err := loadConfig(cmd)
	if err != nil {
		return analyze.Options{}, err
	}
	if err := front.ApplyConfig(c, cliFlags{cmd}, cmd.Name == "check"); err != nil {
		return analyze.Options{}, err
	}
	opts, err := front.Options(name, c, cmd.String("policy"), cmd.Duration("window"))
	if err != nil {
		return opts, err
	}
	return opts, readBrokerLogs(cmd, name, &opts)
}

// writeOutputs renders the result in each format to its output.
func writeOutputs(cmd *cli.Command, outs []front.Output, res *analyze.Result, in *input, code int, failOn analyze.Severity) error {
	for _, o := range outs {
		if err := writeOutput(cmd, o, func(w io.Writer) error {
			return render(cmd, o.Format, w, res, in, code, failOn)
		}); err != nil {
			return err
		}
	}
	return nil
}

// writeOutput calls fn with stdout or the created file o.Path.
func writeOutput(cmd *cli.Command, o front.Output, fn func(io.Writer) error) error {
	if o.Path == "-" {
		if err := fn(cmd.Root().Writer); err != nil {
			return failed("check: "+o.Format, err)
		}
		return nil
	}
	w, finish, err := openOutput(o.Path, nil) // through a temporary file
	if err != nil {
		return failed("check: --output", err)
	}
	if err := finish(fn(w)); err != nil {
		return failed("check: "+o.Path, err)
	}
	return nil
}

func render(cmd *cli.Command, format string, w io.Writer, res *analyze.Result, in *input, code int, failOn analyze.Severity) error {
	return front.Render(w, format, res, front.RenderOptions{
		PerRule: int(cmd.Int("per-rule")), MaxResults: int(cmd.Int("max-results")), Annotations: int(cmd.Int("annotations")),
		ExitCode: code, FailOn: failOn, Version: versionText(), Fingerprints: in.fps,
		Color: format == "text" && colorOn(cmd, w),
	})
}

// input is the dataset check and timeline read: the dataset directory
// given as INPUT, or a temporary one ingested from the audit logs given.
type input struct {
	dir  string
	temp bool // dir is removed by close
	man  *dataset.Manifest
	fps  []string // the findings' fingerprints, when a baseline removed some
}

// checkInput checks the command's INPUTs: a dataset with analyze.Check,
// or audit logs straight from their records (ingest.Scan and
// analyze.CheckRecords), which builds no dataset: no hashes, chains or
// Parquet, only the quarantine of rejected lines in a temporary
// directory.
func checkInput(ctx context.Context, cmd *cli.Command, opts analyze.Options) (*analyze.Result, *input, error) {
	if _, _, _, err := window(cmd); err != nil {
		return nil, nil, err
	}
	in, err := datasetInput(cmd, "check")
	if err != nil {
		return nil, nil, err
	}
	if in == nil && !windowRelative(cmd) {
		if err := applyWindow(cmd, "check", "", &opts); err != nil {
			return nil, nil, err
		}
		return checkRaw(ctx, cmd, opts)
	}
	if in == nil { // the first incident is found by a check of them all: read them once
		if in, err = ingestTemp(ctx, cmd, "check", cmd.Args().Slice()); err != nil {
			return nil, nil, err
		}
	}
	if err := checkSomething("check", in.man); err != nil {
		return nil, in, err
	}
	if err := applyWindow(cmd, "check", in.dir, &opts); err != nil {
		return nil, in, err
	}
	res, err := analyze.Check(in.dir, opts)
	if err != nil {
		return nil, in, failed("check", err)
	}
	return res, in, nil
}

// checkSomething refuses a check of no record: it is not a pass.
func checkSomething(name string, man *dataset.Manifest) error {
	if man.Rows > 0 {
		return nil
	}
	return failed(name, fmt.Errorf("no record to check: %d lines read, %d rejected, %d duplicates; "+
		"a check of nothing is not a pass", man.Totals.Lines, man.Totals.Rejected, man.Totals.Duplicates))
}

// checkRaw checks audit logs without a dataset.
func checkRaw(ctx context.Context, cmd *cli.Command, opts analyze.Options) (*analyze.Result, *input, error) {
	args := cmd.Args().Slice()
	tmp, err := os.MkdirTemp("", "stormaudit-check-")
	if err != nil {
		return nil, nil, failed("check", err)
	}
	in := &input{dir: tmp, temp: true} // Scan wants an empty directory: a new one is
	stderr, quiet := cmd.Root().ErrWriter, cmd.Bool("quiet")
	bar := newProgressBar(stderr, quiet)
	res, err := analyze.CheckRecords(func(fn func([]auditfmt.Record) error) (*dataset.Manifest, error) {
		man, err := ingestScan(ctx, in.dir, ingestSources(cmd, args), ingest.Options{Progress: bar.update, MaxRejects: cmd.Int64("max-rejects")}, fn)
		bar.done()
		if err != nil {
			return nil, failed("check: read", err)
		}
		in.man = man
		printReadSummary(cmd, "check", len(args), man, in.dir)
		return man, checkSomething("check", man)
	}, in.dir, opts)
	if err != nil {
		return nil, in, err
	}
	return res, in, nil
}

// ingestSources names the INPUTs as ingest sources, "-" being stdin.
func ingestSources(cmd *cli.Command, args []string) []ingest.Source {
	sources := make([]ingest.Source, len(args))
	for i, a := range args {
		sources[i] = ingest.Source{Name: a, Stdin: cmd.Root().Reader}
	}
	return sources
}

// printReadSummary prints, unless --quiet, the totals of what was read
// and the first rejects, found in dir.
func printReadSummary(cmd *cli.Command, name string, inputs int, man *dataset.Manifest, dir string) {
	if cmd.Bool("quiet") {
		return
	}
	stderr, t := cmd.Root().ErrWriter, man.Totals
	fmt.Fprintf(stderr, "stormaudit: %s: read %s: %d lines = %d accepted + %d rejected + %d duplicates\n",
		name, plural(inputs, "input"), t.Lines, t.Accepted, t.Rejected, t.Duplicates)
	if t.Rejected > 0 {
		printRejects(stderr, dir, "  ", 5)
	}
}

// datasetInput returns the command's dataset when its INPUT is one, nil
// when its INPUTs are audit logs.
func datasetInput(cmd *cli.Command, name string) (*input, error) {
	args := cmd.Args().Slice()
	if len(args) == 0 {
		return nil, usageErr("%s: no INPUT given; expected a dataset directory, or audit log files or - for stdin", name)
	}
	for _, a := range args {
		st, err := os.Stat(a)
		if a == "-" || err != nil || !st.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(a, "manifest.json")); err != nil {
			return nil, usageErr("%s: %s is a directory but not a dataset (it has no manifest.json)", name, a)
		}
		if len(args) > 1 {
			return nil, usageErr("%s: a dataset directory must be the only INPUT, found %d inputs (stormaudit ingest makes one dataset of several)", name, len(args))
		}
		man, err := dataset.ReadManifest(a)
		if err != nil {
			return nil, failed(name, err)
		}
		return &input{dir: a, man: man}, nil
	}
	return nil, nil
}

// openInput reads the command's INPUTs: exactly one dataset directory
// (one with a manifest.json), or audit log files and "-", which it
// ingests into a temporary dataset, printing the ingest's totals and first
// rejects on stderr unless --quiet.
func openInput(ctx context.Context, cmd *cli.Command, name string) (*input, error) {
	in, err := datasetInput(cmd, name)
	if in != nil || err != nil {
		return in, err
	}
	return ingestTemp(ctx, cmd, name, cmd.Args().Slice())
}

// ingestTemp ingests the audit logs into a new temporary dataset.
func ingestTemp(ctx context.Context, cmd *cli.Command, name string, args []string) (*input, error) {
	dir, err := os.MkdirTemp("", "stormaudit-"+name+"-")
	if err != nil {
		return nil, failed(name, err)
	}
	in := &input{dir: dir, temp: true}
	bar := newProgressBar(cmd.Root().ErrWriter, cmd.Bool("quiet"))
	in.man, err = ingestRun(ctx, dir, ingestSources(cmd, args), ingest.Options{CreatedBy: "stormaudit " + versionText(), Progress: bar.update})
	bar.done()
	if err != nil {
		in.close()
		return nil, failed(name+": ingest", err)
	}
	printReadSummary(cmd, name, len(args), in.man, dir)
	return in, nil
}

// close removes a temporary dataset.
func (in *input) close() {
	if in.temp {
		os.RemoveAll(in.dir)
	}
}

// settle makes the result name what outlives the run: a temporary
// dataset's files are gone, so records are named by input and line only;
// inputs are named relative to the working directory where they can be.
func (in *input) settle(res *analyze.Result) {
	if in.temp {
		res.Dataset, res.Files = "", nil
	}
	if wd, err := os.Getwd(); err == nil {
		front.RelativeSources(res, wd)
	}
}
