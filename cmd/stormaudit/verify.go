package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/stormaudit/stormaudit/internal/sidefile"
	"io"
	"strings"

	"github.com/stormaudit/stormaudit/internal/safe"
	"github.com/stormaudit/stormaudit/verify"

	"github.com/urfave/cli/v3"
	"golang.org/x/mod/sumdb/note"

	"github.com/stormaudit/stormaudit/hashchain"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "prove a dataset complete and untampered",
		ArgsUsage: "DATASET",
		Description: `Recomputes every record's canonical bytes, chain link and tree leaf from the
Parquet files and checks link continuity, sequence contiguity, and the
checkpoint's size, root and signature (docs/hashchain.md). On failure it
names the first bad record. It always says what it covered.

--since OLD_CHECKPOINT also proves that the dataset extends an earlier
checkpoint of the same log. --proof FILE checks a single-record proof made by
"stormaudit prove", without the dataset.

Exit status: 0 intact, 1 tampered or inconsistent, 2 usage or I/O error.`,
		OnUsageError: onUsageError,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "verifier", Usage: "verifier key file (NAME.pub) whose signature counts; repeatable", Sources: cli.EnvVars("STORMAUDIT_VERIFIER")},
			&cli.StringFlag{Name: "since", Usage: "an earlier checkpoint file the dataset must extend"},
			&cli.StringFlag{Name: "log", Usage: "the log the dataset must be (as ingest printed it, or its manifest says): proves it is the dataset expected, not another signed by the same key", Sources: cli.EnvVars("STORMAUDIT_LOG")},
			&cli.StringFlag{Name: "proof", Usage: "check this single-record proof instead of a dataset"},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "text or json", Value: "text"},
		},
		Action: runVerify,
	}
}

func runVerify(ctx context.Context, cmd *cli.Command) error {
	format := cmd.String("format")
	if format != "text" && format != "json" {
		return usageErr("verify: --format: expected text or json, found %q", format)
	}
	verifiers, names, err := loadVerifiers(cmd.StringSlice("verifier"))
	if err != nil {
		return usageErr("verify: --verifier: %v", err)
	}
	if len(names) == 0 {
		verifiers = nil
	}
	if p := cmd.String("proof"); p != "" {
		// a proof carries its checkpoint, not the dataset's history: what
		// checks a dataset cannot be silently left out
		if cmd.NArg() > 0 {
			return usageErr("verify: --proof checks a proof without its dataset; found the argument %q: give one or the other", cmd.Args().First())
		}
		if cmd.String("since") != "" {
			return usageErr("verify: --since proves a dataset extends an earlier checkpoint; a --proof has one checkpoint and no history to check it against")
		}
		return runVerifyProof(cmd, p, verifiers, format)
	}
	if cmd.NArg() != 1 {
		return usageErr("verify: expected one DATASET directory, found %d arguments", cmd.NArg())
	}
	opts := verify.Options{Verifiers: verifiers, Log: cmd.String("log")}
	if s := cmd.String("since"); s != "" {
		old, err := readAnyCheckpoint(s, verifiers)
		if err != nil {
			return usageErr("verify: --since: %v", err)
		}
		opts.Since = &old
	}
	rep, err := verify.Dataset(cmd.Args().First(), opts)
	if err != nil {
		return failed("verify", err)
	}
	out := cmd.Root().Writer
	if format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
	} else {
		printVerifyReport(out, rep)
	}
	if rep.Problem != nil {
		return verdict(fmt.Errorf("verify: %s", rep.Problem))
	}
	return nil
}

// readAnyCheckpoint reads a checkpoint file: a signed note (checked
// against verifiers when there are any) or a bare checkpoint.
func readAnyCheckpoint(path string, verifiers note.Verifiers) (hashchain.Checkpoint, error) {
	b, err := sidefile.Read(path, sidefile.MaxKey)
	if err != nil {
		return hashchain.Checkpoint{}, err
	}
	f, err := hashchain.ReadCheckpointFile(b, verifiers)
	if err != nil {
		return f.Checkpoint, fmt.Errorf("%s: %v", path, strings.TrimPrefix(err.Error(), "hashchain: "))
	}
	return f.Checkpoint, nil
}

func printVerifyReport(w io.Writer, rep *verify.Report) {
	fmt.Fprintf(w, "dataset:    %s\n", safe.Text(rep.Dataset))
	if rep.Log != "" {
		fmt.Fprintf(w, "log:        %s\n", safe.Text(rep.Log))
	}
	if cp := rep.Checkpoint; cp != nil { // the checks that need a checkpoint ran
		fmt.Fprintf(w, "checked:    %d records in %d chains (%d bytes of canonical records, hash chain version %d)\n", rep.Records, rep.Origins, rep.Bytes, rep.ChainVersion)
		fmt.Fprintf(w, "checkpoint: %d records, root %s\n", cp.Size, cp.Root)
		switch {
		case !rep.Signed:
			fmt.Fprintf(w, "signature:  none (the checkpoint is unsigned: it shows consistency, not who vouched for it)\n")
		case len(rep.Verified) > 0:
			fmt.Fprintf(w, "signature:  verified: %s\n", safe.Text(strings.Join(rep.Verified, ", ")))
		default:
			fmt.Fprintf(w, "signature:  not checked: it names %s (give --verifier KEY.pub to check it)\n", safe.Text(strings.Join(rep.Signers, ", ")))
		}
		fmt.Fprintf(w, "unsealed:   %d records after the checkpoint\n", rep.Unsealed)
	}
	if a := rep.Accounted; a.Lines > 0 || rep.Problem == nil {
		signed := "unsigned manifest"
		if rep.ManifestSigned {
			signed = "signed manifest"
		}
		fmt.Fprintf(w, "accounted:  %d lines read = %d accepted + %d rejected + %d duplicates (%s; rejects and duplicates files match it)\n",
			a.Lines, a.Accepted, a.Rejected, a.Duplicates, signed)
	}
	for _, b := range rep.BrokerLogs {
		fmt.Fprintf(w, "broker log: %s, matching the %s\n", safe.Text(b), map[bool]string{true: "signed manifest", false: "manifest"}[rep.ManifestSigned])
	}
	if rep.Since != nil && rep.Problem == nil {
		fmt.Fprintf(w, "since:      extends the earlier checkpoint of %d records, root %s\n", rep.Since.Size, rep.Since.Root)
	}
	if rep.Problem != nil {
		fmt.Fprintf(w, "result:     TAMPERED OR INCONSISTENT: %s\n", safe.Lines(rep.Problem.String()))
		return
	}
	fmt.Fprintf(w, "result:     intact\n")
}
