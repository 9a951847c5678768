package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/stormaudit/stormaudit/cmd/internal/front"
	"github.com/stormaudit/stormaudit/internal/sidefile"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/stormaudit/stormaudit/afteraction"
	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/replay"
	"github.com/stormaudit/stormaudit/verify"
)

func reportCommand() *cli.Command {
	d := afteraction.DefaultOptions
	return &cli.Command{
		Name:      "report",
		Usage:     "write a self-contained HTML after-action report with charts",
		ArgsUsage: "INPUT...",
		Description: `Checks INPUT (one dataset directory, or audit logs and "-" for stdin, read as
by "stormaudit check") and writes one HTML file that opens offline in any
browser: what was analysed and its verification, each incident, the fleet's
socket-opens and connects over time, the distribution of times to recover,
the worst devices, the findings with their explanations, and the timelines of
the devices they concern (docs/report.md). The file fetches nothing and runs
no script.

A dataset is verified first (as "stormaudit verify" does; --verifier checks
its signatures). --replay adds a replay's report ("stormaudit replay --format
json"), or its --compare of the recorded schedule and a what-if, side by side.

--redact replaces credentials and hardware identifiers (MAC addresses, bearer
tokens, PEM blocks, JWTs, URL passwords) wherever the page shows them, client
ids and the charts included, with keyed pseudonyms (as "stormaudit export
--redact" does; --redact-key FILE keys them); the page and stderr say what was
replaced.

Exit status: 0 written; 1 written, but the dataset failed verification;
2 usage, input or I/O errors.`,
		OnUsageError: onUsageError,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: `the HTML file to write ("-": stdout, not a terminal)`, Required: true, TakesFile: true},
			&cli.StringFlag{Name: "policy", Usage: "the declared policy: a policy file or a preset name (default: inferred from the log)", Sources: cli.EnvVars("STORMAUDIT_POLICY")},
			&cli.StringFlag{Name: "replay", Usage: "a replay's JSON report to show beside the log's", TakesFile: true},
			&cli.StringSliceFlag{Name: "verifier", Usage: "verifier key file (NAME.pub) whose signature counts; repeatable", Sources: cli.EnvVars("STORMAUDIT_VERIFIER")},
			&cli.StringFlag{Name: "title", Usage: "the report's title", Value: "Reconnect after-action report"},
			&cli.DurationFlag{Name: "window", Value: analyze.DefaultWindow, Usage: "the window socket-opens are counted in for the fleet's figures"},
			&cli.IntFlag{Name: "per-rule", Value: d.PerRule, Usage: "findings shown per rule, the worst first"},
			&cli.IntFlag{Name: "devices", Value: d.Worst, Usage: "worst devices in the table and strip chart"},
			&cli.IntFlag{Name: "timelines", Value: d.Timelines, Usage: "devices whose timelines are shown, at most"},
			&cli.BoolFlag{Name: "redact", Usage: "replace credentials and hardware identifiers on the page with consistent pseudonyms"},
			&cli.StringFlag{Name: "redact-key", Usage: "with --redact: the file whose bytes key the pseudonyms (default: a random key)", TakesFile: true},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no ingest summary", Sources: boolEnv("STORMAUDIT_QUIET")},
		}, append(brokerFlags(), windowFlags()...)...),
		Action: runReport,
	}
}

func runReport(ctx context.Context, cmd *cli.Command) error {
	opts, err := checkOptions(cmd, "report")
	if err != nil {
		return err
	}
	o := afteraction.DefaultOptions
	o.PerRule, o.Worst, o.Timelines = int(cmd.Int("per-rule")), int(cmd.Int("devices")), int(cmd.Int("timelines"))
	if o.PerRule < 0 || o.Worst < 0 || o.Timelines < 0 {
		return usageErr("report: --per-rule, --devices and --timelines: expected numbers >= 0")
	}
	if o.Redact, err = redactor(cmd, "report"); err != nil {
		return err
	}
	out := cmd.String("output")
	if out == "-" && isTerminal(cmd.Root().Writer) {
		return usageErr("report: --output -: standard output is a terminal; give --output a file (report.html)")
	}
	if err := front.RefuseClobber("report: --output", []string{out}, append(cmd.Args().Slice(), sideInputs(cmd)...)); err != nil {
		return err
	}
	var reps []*replay.Report
	if p := cmd.String("replay"); p != "" {
		if reps, err = readReplay(p); err != nil {
			return err
		}
	}
	verifiers, names, err := loadVerifiers(cmd.StringSlice("verifier"))
	if err != nil {
		return usageErr("report: --verifier: %v", err)
	}
	in, err := openInput(ctx, cmd, "report")
	if err != nil {
		return err
	}
	defer in.close()
	if err := checkSomething("report", in.man); err != nil {
		return err
	}
	if err := applyWindow(cmd, "report", in.dir, &opts); err != nil {
		return err
	}
	// a dataset is verified while it is checked: each reads it once, and
	// the check's parallel rules leave a core to spare at times
	type verified struct {
		rep *verify.Report
		err error
	}
	vc := make(chan verified, 1)
	if !in.temp {
		go func() {
			vo := verify.Options{}
			if len(names) > 0 {
				vo.Verifiers = verifiers
			}
			v, err := verify.Dataset(in.dir, vo)
			vc <- verified{v, err}
		}()
	}
	rep, err := afteraction.Gather(in.dir, opts, o)
	var v verified
	if !in.temp {
		v = <-vc
	}
	if err != nil {
		return failed("report", err)
	}
	if v.err != nil {
		return failed("report: verify", v.err)
	}
	rep.Title, rep.Generated, rep.Version, rep.Replay, rep.Verify = cmd.String("title"), time.Now(), versionText(), reps, v.rep
	if in.temp {
		rep.Dataset = ""
	}
	in.settle(rep.Overview.Result)
	if ctx.Err() != nil {
		return nil // interrupted: run reports the signal; no page is written
	}
	write := func(w io.Writer) error { return afteraction.Write(w, rep, o) }
	if out == "-" {
		err = write(cmd.Root().Writer)
	} else {
		err = replaceFile(out, write)
	}
	if err != nil {
		return failed("report: "+out, err)
	}
	if o.Redact != nil {
		printRedacted(cmd.Root().ErrWriter, "report", o.Redact)
	}
	if v := rep.Verify; v != nil && v.Problem != nil {
		return verdict(fmt.Errorf("report: written to %s, but the dataset failed verification: %s", out, v.Problem))
	}
	return nil
}

// readReplay reads a replay's JSON report.
func readReplay(path string) ([]*replay.Report, error) {
	b, err := sidefile.Read(path, sidefile.MaxReport)
	if err != nil {
		return nil, usageErr("report: --replay: %v", err)
	}
	reps, err := replay.ReadJSON(bytes.NewReader(b))
	if err != nil {
		var se *os.PathError
		if errors.As(err, &se) {
			return nil, failed("report: --replay", err)
		}
		return nil, usageErr("report: --replay: %s: %v", path, err)
	}
	return reps, nil
}
