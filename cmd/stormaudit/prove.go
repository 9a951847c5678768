package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/stormaudit/stormaudit/cmd/internal/front"
	"github.com/stormaudit/stormaudit/internal/sidefile"
	"strings"

	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/internal/safe"
	"github.com/stormaudit/stormaudit/verify"

	"github.com/urfave/cli/v3"
	"golang.org/x/mod/sumdb/note"
)

func proveCommand() *cli.Command {
	return &cli.Command{
		Name:      "prove",
		Usage:     "export one record with its inclusion proof and the signed checkpoint",
		ArgsUsage: "DATASET",
		Description: `Writes a JSON file holding one record's canonical bytes, its chain position,
an RFC 6962 inclusion proof and the dataset's signed checkpoint, so that a
reviewer can share one record: "stormaudit verify --proof FILE --verifier KEY"
checks it without the dataset. The dataset is verified on the way.`,
		OnUsageError: onUsageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "device", Usage: "the record's device (its client_id): the chain LOG/CLIENT_ID of the dataset's log"},
			&cli.StringFlag{Name: "origin", Usage: "or the record's chain itself (LOG/CLIENT_ID, as verify and timeline show it)"},
			&cli.Int64Flag{Name: "seq", Usage: "the record's sequence number in its chain: the chain_seq timeline shows", Required: true},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "file to write, - for stdout", Value: "-"},
		},
		Action: runProve,
	}
}

func runProve(ctx context.Context, cmd *cli.Command) error {
	if cmd.NArg() != 1 {
		return usageErr("prove: expected one DATASET directory, found %d arguments", cmd.NArg())
	}
	dir, origin := cmd.Args().First(), cmd.String("origin")
	switch device := cmd.String("device"); {
	case (device == "") == (origin == ""):
		return usageErr("prove: expected --device CLIENT_ID or --origin LOG/CLIENT_ID (one of them)")
	case device != "":
		m, err := dataset.ReadManifest(dir)
		if err != nil {
			return failed("prove: "+dir, err)
		}
		origin = hashchain.Origin(m.Log, device)
	}
	p, err := verify.Prove(dir, origin, cmd.Int64("seq"))
	if err != nil {
		return failed("prove", err)
	}
	b, _ := json.MarshalIndent(p, "", "  ")
	if err := front.RefuseClobber("prove: --output", []string{cmd.String("output")}, append([]string{cmd.Args().First()}, sideInputs(cmd)...)); err != nil {
		return err
	}
	w, finish, err := openOutput(cmd.String("output"), cmd.Root().Writer)
	if err != nil {
		return failed("prove", err)
	}
	_, err = w.Write(append(b, '\n'))
	if err = finish(err); err != nil {
		return failed("prove", err)
	}
	return nil
}

func runVerifyProof(cmd *cli.Command, path string, verifiers note.Verifiers, format string) error {
	b, err := sidefile.Read(path, sidefile.MaxReport)
	if err != nil {
		return failed("verify: --proof", err)
	}
	p, err := hashchain.ParseProof(b)
	if err != nil {
		return failed("verify: --proof: "+path, fmt.Errorf("expected a proof written by stormaudit prove: %w", err))
	}
	cp, signers, err := hashchain.CheckProof(p, verifiers)
	if log := cmd.String("log"); err == nil && log != "" && cp.Origin != log {
		// the pin a dataset check enforces: a proof from another dataset
		// signed by the same key is not the record expected
		err = fmt.Errorf("log: the proof's checkpoint is of log %q, not of %q: a record of another dataset than the one expected", cp.Origin, log)
	}
	out := cmd.Root().Writer
	if format == "json" {
		res := map[string]any{"proof": path, "origin": p.Origin, "seq": p.Seq, "index": p.Index, "tree_size": p.TreeSize, "verified": signers, "ok": err == nil}
		if err != nil {
			res["problem"] = err.Error()
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		enc.Encode(res)
	} else {
		fmt.Fprintf(out, "proof:      %s\n", path)
		// the proof file is untrusted input: every text of it is escaped
		if p.Format == hashchain.ProofFormat3 {
			fmt.Fprintf(out, "record:     origin %s, seq %d, in tree leaf %d of %d over %d records (read from %s:%d)\n",
				safe.Text(p.Origin), p.Seq, p.Index, p.Leaves, p.TreeSize, safe.Text(p.Source), p.Line)
		} else {
			fmt.Fprintf(out, "record:     origin %s, seq %d, row %d of %d (read from %s:%d)\n", safe.Text(p.Origin), p.Seq, p.Index, p.TreeSize, safe.Text(p.Source), p.Line)
		}
		if err == nil {
			fmt.Fprintf(out, "checkpoint: %s, %d records, root %s\n", safe.Text(cp.Origin), cp.Size, cp.Root)
			if len(signers) > 0 {
				fmt.Fprintf(out, "signature:  verified: %s\n", safe.Text(strings.Join(signers, ", ")))
			} else {
				fmt.Fprintf(out, "signature:  NOT checked (give --verifier KEY.pub)\n")
			}
			fmt.Fprintf(out, "result:     the record is in the checkpointed log\n")
		} else {
			fmt.Fprintf(out, "result:     INVALID: %s\n", safe.Text(err.Error()))
		}
	}
	if err != nil {
		return verdict(fmt.Errorf("verify: --proof %s: %v", path, err))
	}
	return nil
}
