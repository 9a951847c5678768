package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/stormaudit/stormaudit/cmd/internal/front"
	"github.com/stormaudit/stormaudit/internal/safe"
	"github.com/stormaudit/stormaudit/redact"
	"golang.org/x/term"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/urfave/cli/v3"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a dataset as an Arrow IPC file or as NDJSON",
		ArgsUsage: "DATASET",
		Description: `--format arrow writes the Arrow IPC file format (pandas.read_feather,
polars.read_ipc, DuckDB's arrow extension): client_id, outcome, host_id, stage,
failure_class and source dictionary encoded, buffers compressed with
--compression (zstd unless told; lz4, or none for a reader built without
codecs), recorded_at in microseconds (timestamp[us, tz=UTC]) as in the
dataset's Parquet files, with the nanoseconds past the microsecond in
recorded_at_ns. It is binary: it is not written to a terminal. --format ndjson writes
the records in the seed format, one per line, in dataset order.

--redact replaces credentials and hardware identifiers in the values devices
wrote (client_id, host_id, attempt_id, record_id, and the unknown and envelope
members) with keyed pseudonyms: the same value gets the same pseudonym
throughout the output, so a device's records still go together. What was
replaced, by field and kind but never the value, is printed on stderr. The key
is random unless --redact-key FILE gives one (keep it as secret as the values:
with it a guessed value can be confirmed); give the same key to outputs that
must agree. A redacted export no longer matches the hash chain.`,
		OnUsageError: onUsageError,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "arrow or ndjson", Value: "arrow"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "file to write, - for stdout", Value: "-"},
			&cli.StringFlag{Name: "compression", Usage: "arrow: zstd, lz4 or none", Value: defaultExportCompression},
			&cli.BoolFlag{Name: "redact", Usage: "replace credentials and hardware identifiers with consistent pseudonyms"},
			&cli.StringFlag{Name: "redact-key", Usage: "with --redact: the file whose bytes key the pseudonyms (default: a random key)"},
		}, windowFlags()...),
		Action: runExport,
	}
}

func runExport(ctx context.Context, cmd *cli.Command) error {
	if cmd.NArg() != 1 {
		return usageErr("export: expected one DATASET directory, found %d arguments", cmd.NArg())
	}
	dir := cmd.Args().First()
	format := cmd.String("format")
	if format != "arrow" && format != "ndjson" {
		return usageErr("export: --format: expected arrow or ndjson, found %q", format)
	}
	if err := front.RefuseClobber("export: --output", []string{cmd.String("output")}, append([]string{dir}, sideInputs(cmd)...)); err != nil {
		return err
	}
	switch c := cmd.String("compression"); {
	case c != "zstd" && c != "lz4" && c != "none":
		return usageErr("export: --compression: expected zstd, lz4 or none, found %q", c)
	case format == "arrow" && cmd.String("output") == "-" && isTerminal(cmd.Root().Writer):
		return usageErr("export: --format arrow is binary: give -o FILE, or redirect stdout to a file or a pipe")
	}
	red, err := redactor(cmd, "export")
	if err != nil {
		return err
	}
	var win analyze.Options
	if _, _, _, err := window(cmd); err != nil {
		return err
	}
	if err := applyWindow(cmd, "export", dir, &win); err != nil {
		return err
	}
	var outside int64
	defer func() {
		if outside > 0 {
			fmt.Fprintf(cmd.Root().ErrWriter, "stormaudit: export: %d records outside --since/--until not written\n", outside)
		}
	}()
	w, finish, err := openOutput(cmd.String("output"), cmd.Root().Writer)
	if err != nil {
		return failed("export", err)
	}
	if format == "arrow" {
		opts := dataset.ExportOptions{Compression: cmd.String("compression"), Context: ctx, Since: win.Since, Until: win.Until, Outside: &outside}
		if red != nil {
			opts.Redact = func(column, v string) string { return redactColumn(red, column, v) }
		}
		err = dataset.ExportArrowIPC(dir, w, opts)
	} else {
		err = exportNDJSON(ctx, dir, w, red, win, &outside)
	}
	if err = finish(err); err != nil {
		return failed("export", err)
	}
	if red != nil {
		printRedacted(cmd.Root().ErrWriter, "export", red)
	}
	return nil
}

// defaultExportCompression is export's --compression unless told.
const defaultExportCompression = "zstd"

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// openOutput opens path for writing; "-" is stdout. A file is written
// through a temporary file beside it: finish(err), called once with what
// the writing returned, renames it into place when err is nil and
// removes it otherwise, so that a failed, killed or interrupted write
// leaves path as it was. finish returns the first error. A symbolic link
// is followed (the file it names is replaced, and it still names it), and
// what is not a regular file (/dev/null, a named pipe, a terminal) is
// written as it is: a rename over it would replace the device with a file
// (as root, `simulate -o /dev/null` did).
func openOutput(path string, stdout io.Writer) (w io.Writer, finish func(error) error, err error) {
	if path == "-" {
		return stdout, func(err error) error { return err }, nil
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return nil, nil, fmt.Errorf("%s is a directory: expected a file to write", path)
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, nil, err
		}
		return f, func(err error) error {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}, nil
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, nil, err
	}
	return f, func(err error) error {
		if err == nil {
			err = f.Chmod(0o644)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), path)
		}
		if err != nil {
			os.Remove(f.Name())
		}
		return err
	}, nil
}

// exportNDJSON writes the dataset in dir to w as NDJSON, each record
// redacted by red when it is not nil.
// Only the records in win's Since and Until are written; outside counts
// the others.
func exportNDJSON(ctx context.Context, dir string, w io.Writer, red *redact.Redactor, win analyze.Options, outside *int64) error {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !win.Since.IsZero() {
		lo = win.Since.UnixNano()
	}
	if !win.Until.IsZero() {
		hi = win.Until.UnixNano()
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	err := dataset.Scan(dir, func(recs []auditfmt.Record, _ []string) error {
		if ctx.Err() != nil {
			return context.Cause(ctx) // a signal: stop between two batches
		}
		for i := range recs {
			if at := recs[i].RecordedAt; at < lo || at >= hi {
				*outside++
				continue
			}
			if red != nil {
				redactRecord(red, &recs[i])
			}
			line = append(recs[i].AppendJSON(line[:0]), '\n')
			bw.Write(line)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// printRejects prints the first n rejects of a dataset, as a hint of what
// went wrong.
func printRejects(w io.Writer, dir, indent string, n int) {
	f, err := os.Open(filepath.Join(dir, dataset.RejectsName))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for i := 0; i < n && sc.Scan(); i++ {
		var e struct{ Error string }
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			fmt.Fprintf(w, "%s%s\n", indent, safe.Lines(e.Error))
		}
	}
}

// plural returns "1 thing" or "N things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
