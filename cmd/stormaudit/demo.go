package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/afteraction"
	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/replay"
	"github.com/stormaudit/stormaudit/report"
	"github.com/stormaudit/stormaudit/verify"

	"github.com/urfave/cli/v3"
	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/cmd/internal/demodata"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/hashchain"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run the whole path on the built-in sample incident",
		Description: `Writes the built-in sample log (48 devices losing the broker for 75 s) to
DIR/input, makes a signing key in DIR/keys, ingests the log into DIR/dataset
with a signed checkpoint, verifies it, exports it to DIR/incident.arrow, and
checks it against the reference client's policy (the full-jitter preset).
Then it simulates one outage of a 2,000-device fleet twice, on a fixed 5 s
timer and with full jitter, against a broker that accepts 100 connects a
second, ingests both into DIR/whatif-*, and compares them. It prints what
each step did. DIR defaults to a new temporary directory.`,
		OnUsageError: onUsageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "directory for the demo's files (default: a new temporary directory)"},
		},
		Action: runDemo,
	}
}

func runDemo(ctx context.Context, cmd *cli.Command) error {
	out := cmd.Root().ErrWriter
	dir := cmd.String("dir")
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "stormaudit-demo-")
	} else {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return failed("demo", err)
	}
	input := filepath.Join(dir, "input", "incident.ndjson")
	if err := os.MkdirAll(filepath.Dir(input), 0o755); err != nil {
		return failed("demo", err)
	}
	if err := os.WriteFile(input, demodata.Incident, 0o644); err != nil {
		return failed("demo", err)
	}
	fmt.Fprintf(out, "1. wrote the sample incident log: %s (%d bytes)\n", input, len(demodata.Incident))

	keys := filepath.Join(dir, "keys")
	signer, verifiers, err := demoKeys(keys)
	if err != nil {
		return failed("demo: keygen", err)
	}
	fmt.Fprintf(out, "2. stormaudit keygen --name demo-collector --out %s\n", keys)
	fmt.Fprintf(out, "   signer key %s, verifier key %s\n", filepath.Join(keys, "demo-collector.key"), filepath.Join(keys, "demo-collector.pub"))

	ds := filepath.Join(dir, "dataset")
	fmt.Fprintf(out, "3. stormaudit ingest --key %s -o %s %s\n", filepath.Join(keys, "demo-collector.key"), ds, input)
	man, err := ingestRun(ctx, ds, []ingest.Source{{Name: input}}, ingest.Options{CreatedBy: "stormaudit " + versionText(), Signer: signer})
	if err != nil {
		return failed("demo: ingest", err)
	}
	t := man.Totals
	fmt.Fprintf(out, "   %d lines = %d accepted + %d rejected + %d duplicates\n", t.Lines, t.Accepted, t.Rejected, t.Duplicates)
	for _, f := range man.Files {
		fmt.Fprintf(out, "   %s: %d rows in %s, sha256 %s\n", filepath.Join(ds, f.Name), f.Rows, plural(f.RowGroups, "row group"), f.SHA256[:16])
	}
	fmt.Fprintf(out, "   rejected lines, verbatim with their reasons: %s\n", filepath.Join(ds, dataset.RejectsName))
	printRejects(out, ds, "     ", 5)
	fmt.Fprintf(out, "   duplicates and the lines they repeat: %s\n", filepath.Join(ds, dataset.DuplicatesName))
	fmt.Fprintf(out, "   checkpoint of %d records signed by %s: %s\n", man.Rows, strings.Join(man.Signers, ", "), filepath.Join(ds, dataset.CheckpointName))

	fmt.Fprintf(out, "4. stormaudit verify --verifier %s %s\n", filepath.Join(keys, "demo-collector.pub"), ds)
	rep, err := verify.Dataset(ds, verify.Options{Verifiers: verifiers})
	if err != nil {
		return failed("demo: verify", err)
	}
	if rep.Problem != nil {
		return verdict(fmt.Errorf("demo: verify: %s", rep.Problem))
	}
	fmt.Fprintf(out, "   intact: %d records in %d device chains, %d bytes of canonical records; signature of %s verified\n",
		rep.Records, rep.Origins, rep.Bytes, strings.Join(rep.Verified, ", "))

	arrowPath := filepath.Join(dir, "incident.arrow")
	fmt.Fprintf(out, "5. stormaudit export --format arrow -o %s %s\n", arrowPath, ds)
	f, err := os.Create(arrowPath)
	if err != nil {
		return failed("demo", err)
	}
	err = dataset.ExportArrowIPC(ds, f, dataset.ExportOptions{Compression: defaultExportCompression})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return failed("demo: export", err)
	}
	st, _ := os.Stat(arrowPath)
	fmt.Fprintf(out, "   %d rows as an Arrow IPC file (%d bytes), for pandas, polars or DuckDB\n", man.Rows, st.Size())
	res, err := demoCheck(out, ds)
	if err != nil {
		return err
	}
	if err := demoReport(out, dir, ds, keys, rep); err != nil {
		return err
	}
	whatIf, err := demoWhatIf(ctx, out, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "done: everything is in %s\n", dir)
	demoSummary(cmd.Root().Writer, dir, ds, res, rep, whatIf)
	return nil
}

// demoSummary prints, on stdout, what the demo found and the commands to
// go on with.
func demoSummary(w io.Writer, dir, ds string, res *analyze.Result, ver *verify.Report, whatIf *replay.SimulatedWhatIf) {
	fmt.Fprintf(w, "stormaudit demo: the sample incident, in %s\n\n", dir)
	for _, v := range report.Verdict(res) {
		fmt.Fprintf(w, "  verdict:   %s.\n", v)
	}
	fmt.Fprintf(w, "  integrity: intact, %d records in %d device chains, the checkpoint signed by %s\n",
		ver.Records, ver.Origins, strings.Join(ver.Verified, ", "))
	s := res.Summary
	fmt.Fprintf(w, "  findings:  %d (%d error, %d warning, %d info) against the full-jitter policy\n",
		len(res.Findings), s.BySeverity["error"], s.BySeverity["warning"], s.BySeverity["info"])
	if r := whatIf.Runs; len(r) == 2 {
		fmt.Fprintf(w, "  what-if:   %d devices back from a %v outage: %d socket-opens/s on the broker's return on a fixed timer, %d with full jitter\n",
			whatIf.Fleet.Devices, whatIf.Fleet.Outage, r[0].Stats.PeakUpPerS, r[1].Stats.PeakUpPerS)
	}
	fmt.Fprintf(w, "\nnext (each line pastes whole into a shell):\n")
	for _, c := range [][2]string{
		{"go install ./cmd/stormaudit", "first, from the repository: puts stormaudit on the PATH for the commands below"},
		{"stormaudit browse --policy full-jitter " + ds, "the incident in the terminal: fleet, devices, timelines, findings"},
		{"open " + filepath.Join(dir, "incident.html"), "the after-action report, in a browser (xdg-open on Linux)"},
		{"stormaudit check --policy full-jitter " + ds, "the findings, as CI sees them (--format json, sarif, junit, github)"},
		{"stormaudit timeline --device dev-0001 " + ds, "one device's records, sessions and outages"},
	} {
		fmt.Fprintf(w, "  %s  # %s\n", c[0], c[1])
	}
}

// demoReport writes the HTML after-action report of the checked dataset,
// with its verification.
func demoReport(out io.Writer, dir, ds, keys string, ver *verify.Report) error {
	path := filepath.Join(dir, "incident.html")
	fmt.Fprintf(out, "   stormaudit report --verifier %s --policy full-jitter -o %s %s\n", filepath.Join(keys, "demo-collector.pub"), path, ds)
	pol, err := policy.Preset("full-jitter")
	if err != nil {
		return failed("demo", err)
	}
	rep, err := afteraction.Gather(ds, analyze.Options{Policy: &pol, PolicyName: "full-jitter"}, afteraction.DefaultOptions)
	if err != nil {
		return failed("demo: report", err)
	}
	rep.Title, rep.Generated, rep.Version, rep.Verify = "Sample incident: 48 devices lose the broker for 75 s", time.Now(), versionText(), ver
	f, err := os.Create(path)
	if err != nil {
		return failed("demo", err)
	}
	err = afteraction.Write(f, rep, afteraction.DefaultOptions)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return failed("demo: report", err)
	}
	st, _ := os.Stat(path)
	fmt.Fprintf(out, "   the same as an HTML after-action report with charts, for any browser (%d bytes): %s\n", st.Size(), path)
	return nil
}

// demoKeys makes a key pair in dir, as keygen would, and loads both halves.
func demoKeys(dir string) (note.Signer, note.Verifiers, error) {
	skey, vkey, err := hashchain.GenerateKey("demo-collector")
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "demo-collector.key"), []byte(skey+"\n"), 0o600); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "demo-collector.pub"), []byte(vkey+"\n"), 0o644); err != nil {
		return nil, nil, err
	}
	signer, err := loadSigner(filepath.Join(dir, "demo-collector.key"))
	if err != nil {
		return nil, nil, err
	}
	verifiers, _, err := loadVerifiers([]string{filepath.Join(dir, "demo-collector.pub")})
	return signer, verifiers, err
}
