package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/ingest"

	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/stormaudit/stormaudit/dataset"
)

func ingestCommand() *cli.Command {
	return &cli.Command{
		Name:      "ingest",
		Usage:     "decode, validate and de-duplicate audit logs into a Parquet dataset",
		ArgsUsage: "INPUT...",
		Description: `Reads NDJSON (flat records or logging envelopes), CSV with a header row,
gzip-compressed versions of both, or a stormaudit Parquet file; "-" reads stdin.
Writes DATASET/part-NNNNN.parquet sorted by client_id and recorded_at,
DATASET/manifest.json, DATASET/rejects.ndjson (every rejected line verbatim)
and DATASET/duplicates.ndjson (every duplicate line and the line it repeats).

--buckets N partitions the dataset by client id, Hive-style, for engines that
split work by directory (DuckDB, Spark, Trino, Beam): bucket b of N holds the
devices whose client_id hashes there (32-bit FNV-1a of its bytes, modulo N),
in DATASET/bucket=BBB/part-NNNNN.parquet, each device in one bucket. The
manifest, the checkpoint and verify cover every bucket.

The dataset is built in a directory beside DATASET and renamed into place once
complete: whatever stops an ingest (an error, --strict, Ctrl-C, SIGTERM, a
kill), DATASET is left as it was, and the next ingest into it removes what a
killed one left. More rejected lines than --max-rejects stop the ingest.

Exit status: 0 when it ran (rejects are reported, not errors); 2 on usage or
I/O errors, on the first rejected line under --strict, or beyond
--max-rejects.`,
		OnUsageError: onUsageError,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "dataset directory to create (must be new or empty)", Required: true, Sources: cli.EnvVars("STORMAUDIT_DATASET")},
			&cli.BoolFlag{Name: "strict", Usage: "stop at the first rejected line, exit 2 and write no dataset", Sources: boolEnv("STORMAUDIT_STRICT")},
			&cli.Int64Flag{Name: "max-rejects", Value: ingest.DefaultMaxRejects, Usage: "stop, exit 2 and write no dataset once more lines than this are rejected (-1: no limit)", Sources: cli.EnvVars("STORMAUDIT_MAX_REJECTS")},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no summary and no progress", Sources: boolEnv("STORMAUDIT_QUIET")},
			&cli.StringFlag{Name: "key", Usage: "sign the checkpoint with this key (NAME.key from stormaudit keygen)", Sources: cli.EnvVars("STORMAUDIT_KEY")},
			&cli.StringSliceFlag{Name: "verifier", Usage: "verifier key (NAME.pub) for the signed checkpoints of collector logs given as inputs; repeatable", Sources: cli.EnvVars("STORMAUDIT_VERIFIER")},
			&cli.StringFlag{Name: "log", Usage: "the log's name: the checkpoint's first line (default stormaudit/ and the dataset's directory name)", Sources: cli.EnvVars("STORMAUDIT_LOG")},
			&cli.IntFlag{Name: "buckets", Usage: "partition the dataset by client id into N buckets (bucket=BBB/ directories; 0: none)"},
			&cli.IntFlag{Name: "chunk-records", Usage: "records sorted in memory before spilling to disk", Value: 1 << 18, Hidden: true},
		}, brokerFlags()...),
		Action: runIngest,
	}
}

func runIngest(ctx context.Context, cmd *cli.Command) error {
	inputs := cmd.Args().Slice()
	if len(inputs) == 0 {
		return usageErr("ingest: no INPUT given; expected one or more files, or - for stdin")
	}
	out := cmd.String("output")
	if out == "" { // an empty STORMAUDIT_DATASET passes as set
		return usageErr("ingest: --output is required: the dataset directory to create")
	}
	quiet := cmd.Bool("quiet")
	stderr := cmd.Root().ErrWriter
	sources := make([]ingest.Source, len(inputs))
	for i, name := range inputs {
		sources[i] = ingest.Source{Name: name, Stdin: cmd.Root().Reader}
	}
	opts := ingest.Options{ChunkRecords: int(cmd.Int("chunk-records")), CreatedBy: "stormaudit " + versionText(), Log: cmd.String("log"),
		Strict: cmd.Bool("strict"), MaxRejects: cmd.Int64("max-rejects"), Buckets: int(cmd.Int("buckets")),
		Notify: func(s string) { fmt.Fprintf(stderr, "stormaudit: ingest: %s\n", s) }}
	if opts.MaxRejects == 0 {
		return usageErr("ingest: --max-rejects: expected a count > 0, or -1 for no limit, found 0")
	}
	if opts.Buckets < 0 || opts.Buckets > dataset.MaxBuckets {
		return usageErr("ingest: --buckets: expected 0 to %d, found %d", dataset.MaxBuckets, opts.Buckets)
	}
	if vs := cmd.StringSlice("verifier"); len(vs) > 0 {
		verifiers, _, err := loadVerifiers(vs)
		if err != nil {
			return usageErr("ingest: --verifier: %v", err)
		}
		opts.Verifiers = verifiers
	}
	if k := cmd.String("key"); k != "" {
		signer, err := loadSigner(k)
		if err != nil {
			return usageErr("ingest: --key: %v", err)
		}
		opts.Signer = signer
	}
	ins, bo, err := brokerInputs(cmd, "ingest")
	if err != nil {
		return err
	}
	for _, in := range ins {
		opts.BrokerLogs = append(opts.BrokerLogs, ingest.BrokerSource{Name: in.name, Data: in.data, Options: bo})
	}
	bar := newProgressBar(stderr, quiet)
	opts.Progress = bar.update
	man, err := ingestRun(ctx, out, sources, opts)
	bar.done()
	if err != nil {
		return failed("ingest", err)
	}
	if !quiet {
		printIngestSummary(stderr, out, man)
	}
	return nil
}

func printIngestSummary(w io.Writer, dir string, m *dataset.Manifest) {
	for _, in := range m.Inputs {
		fmt.Fprintf(w, "stormaudit: %s (%s): %d lines = %d accepted + %d rejected + %d duplicates\n",
			in.Name, in.Format, in.Lines, in.Accepted, in.Rejected, in.Duplicates)
		if c := in.Collector; c != nil {
			sig := "unsigned"
			switch {
			case len(c.Signers) > 0 && c.SignaturesChecked:
				sig = "signature verified: " + strings.Join(c.Signers, ", ")
			case len(c.Signers) > 0:
				sig = "signed by " + strings.Join(c.Signers, ", ") + ", NOT checked (give --verifier)"
			}
			fmt.Fprintf(w, "stormaudit: %s is a collector log of %s: %d records verified, %d unsealed; %s\n", in.Name, c.Log, c.Records, c.Unsealed, sig)
		}
	}
	t := m.Totals
	fmt.Fprintf(w, "stormaudit: total: %d lines = %d accepted + %d rejected + %d duplicates\n",
		t.Lines, t.Accepted, t.Rejected, t.Duplicates)
	fmt.Fprintf(w, "stormaudit: wrote %s: %d rows in %s\n", dir, m.Rows, plural(len(m.Files), "Parquet file"))
	if t.Rejected > 0 {
		fmt.Fprintf(w, "stormaudit: rejected lines are in %s\n", filepath.Join(dir, dataset.RejectsName))
		printRejects(w, dir, "  ", 5)
	}
	if t.Duplicates > 0 {
		fmt.Fprintf(w, "stormaudit: duplicate lines are listed in %s\n", filepath.Join(dir, dataset.DuplicatesName))
	}
	for _, b := range m.BrokerLogs {
		fmt.Fprintf(w, "stormaudit: %s (broker log, %s): %d lines = %d events + %d skipped + %d rejected + %d blank; stored as %s\n",
			b.Name, b.Format, b.Lines, b.Events, b.Skipped, b.Rejected, b.Blank, filepath.Join(dir, filepath.FromSlash(b.File)))
		if b.Rejected > 0 {
			fmt.Fprintf(w, "stormaudit: its rejected lines are in %s\n", filepath.Join(dir, filepath.FromSlash(b.RejectsFile)))
		}
	}
	if len(m.Signers) > 0 {
		fmt.Fprintf(w, "stormaudit: checkpoint of %d records signed by %s\n", m.Rows, strings.Join(m.Signers, ", "))
	} else {
		fmt.Fprintf(w, "stormaudit: checkpoint of %d records, unsigned (give --key to sign it)\n", m.Rows)
	}
}

// progressBar draws one line on a terminal and nothing elsewhere.
type progressBar struct {
	w     io.Writer
	on    bool
	drawn bool
	start time.Time
}

func newProgressBar(w io.Writer, quiet bool) *progressBar {
	f, ok := w.(*os.File)
	return &progressBar{w: w, on: !quiet && ok && term.IsTerminal(int(f.Fd())), start: time.Now()}
}

func (p *progressBar) update(pr ingest.Progress) {
	if !p.on {
		return
	}
	p.drawn = true
	secs := time.Since(p.start).Seconds()
	if pr.Phase == "read" && pr.TotalBytes > 0 {
		frac := float64(pr.BytesRead) / float64(pr.TotalBytes)
		const width = 30
		n := int(frac * width)
		bar := make([]byte, width)
		for i := range bar {
			bar[i] = '.'
			if i < n {
				bar[i] = '#'
			}
		}
		fmt.Fprintf(p.w, "\r\x1b[Kreading [%s] %3.0f%% %d records %.1fs", bar, frac*100, pr.Records, secs)
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s: %d records %.1fs", pr.Phase, pr.Records, secs)
}

func (p *progressBar) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
