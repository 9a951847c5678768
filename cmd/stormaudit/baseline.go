package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/report"
	"github.com/urfave/cli/v3"
)

// applyBaseline writes --write-baseline from every finding, then drops
// the findings of --baseline from res, keeping the fingerprints of the
// rest for SARIF. Both files may be one: the old baseline is read first.
func applyBaseline(cmd *cli.Command, res *analyze.Result, in *input) error {
	base, err := readBaseline(cmd.String("baseline"), cmd.String("write-baseline") != "")
	if err != nil {
		return err
	}
	if base != nil && base.Version() != report.FingerprintVersion && !sameFile(cmd.String("baseline"), cmd.String("write-baseline")) {
		// said even with --quiet: CI, where baselines live, runs quiet
		fmt.Fprintf(cmd.Root().ErrWriter, "stormaudit: check: baseline %s is %s; rewrite it with --write-baseline to get %s fingerprints, which a reworded message does not change\n",
			cmd.String("baseline"), base.Version(), report.FingerprintVersion)
	}
	if path := cmd.String("write-baseline"); path != "" {
		if err := writeBaseline(path, res); err != nil {
			return failed("check: --write-baseline", err)
		}
		if !cmd.Bool("quiet") {
			fmt.Fprintf(cmd.Root().ErrWriter, "stormaudit: check: wrote a baseline of %s to %s\n", plural(len(res.Findings), "finding"), path)
		}
	}
	if base != nil {
		kept, dropped := base.Filter(res)
		in.fps = kept
		if !cmd.Bool("quiet") {
			fmt.Fprintf(cmd.Root().ErrWriter, "stormaudit: check: %s in the baseline %s not reported\n", plural(dropped, "finding"), cmd.String("baseline"))
		}
	}
	return nil
}

// sameFile reports whether the paths a and b name one existing file.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

// readBaseline reads the baseline at path, nil for none ("", or a file
// not yet written when a check is writing the first).
func readBaseline(path string, writing bool) (*report.Baseline, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && writing:
		return nil, nil // the first baseline: nothing to filter by yet
	case err != nil:
		return nil, usageErr("check: --baseline: %v", err)
	}
	defer f.Close()
	base, err := report.ReadBaseline(f)
	if err != nil {
		return nil, usageErr("check: --baseline: %s: %v", path, err)
	}
	return base, nil
}

// writeBaseline writes the baseline of res to path, through a temporary
// file renamed into place, so that a failed write leaves the old one.
func writeBaseline(path string, res *analyze.Result) error {
	return replaceFile(path, func(w io.Writer) error { return report.WriteBaseline(w, res) })
}

// replaceFile writes path with fn through a temporary file beside it,
// renamed into place only when fn and the close succeed: a failed or
// interrupted write leaves the old file as it was, and no part of a new
// one.
func replaceFile(path string, fn func(io.Writer) error) error {
	if path == "-" {
		path = "./-" // a file of that name here, as before: not stdout
	}
	w, finish, err := openOutput(path, nil)
	if err != nil {
		return err
	}
	return finish(fn(w))
}
