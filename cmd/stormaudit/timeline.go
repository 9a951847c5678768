package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/report"
	"github.com/urfave/cli/v3"
)

func timelineCommand() *cli.Command {
	return &cli.Command{
		Name:      "timeline",
		Usage:     "print one device's reconstructed timeline",
		ArgsUsage: "INPUT...",
		Description: `Prints the records of the device --device in its own order (device_seq,
or the order it wrote them), with the socket-open each backoff_wait implies,
then its sessions and outages. INPUT is read as by "stormaudit check": one
dataset directory, or audit logs and "-" for stdin. When a check of the
input finds the device's clock off (against the fleet's incidents, or a
broker log stored with the dataset), its times are also shown corrected
onto the fleet's clock, with the offset; --clocks=false skips that check.

Exit status: 0 printed; 2 usage, input or I/O errors, or a device that is
not in the log.`,
		OnUsageError: onUsageError,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "device", Aliases: []string{"d"}, Usage: "the client_id of the device", Required: true},
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Value: "text", Usage: "text or json"},
			&cli.BoolFlag{Name: "clocks", Value: true, Usage: "check the input for the device's clock offset and show its times corrected (costs one check of the input)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no ingest summary", Sources: boolEnv("STORMAUDIT_QUIET")},
		}, windowFlags()...),
		Action: runTimeline,
	}
}

func runTimeline(ctx context.Context, cmd *cli.Command) error {
	format := cmd.String("format")
	if format != "text" && format != "json" {
		return usageErr("timeline: --format: expected text or json, found %q", format)
	}
	if _, _, _, err := window(cmd); err != nil {
		return err
	}
	in, err := openInput(ctx, cmd, "timeline")
	if err != nil {
		return err
	}
	defer in.close()
	var win analyze.Options
	if err := applyWindow(cmd, "timeline", in.dir, &win); err != nil {
		return err
	}
	d, sources, outside, err := analyze.TimelineIn(in.dir, cmd.String("device"), win.Since, win.Until)
	var nd *analyze.NoDeviceError
	if errors.As(err, &nd) {
		return usageErr("timeline: --device: %v", err)
	}
	if err != nil {
		return failed("timeline", err)
	}
	res := &analyze.Result{Sources: sources}
	in.settle(res)
	t := report.Timeline{Device: d, Sources: res.Sources}
	if !in.temp {
		for _, f := range in.man.Files {
			t.Files = append(t.Files, filepath.Join(in.dir, f.Name))
		}
		rows, _, err := dataset.ReadClient(in.dir, d.ID)
		if err != nil {
			return failed("timeline", err)
		}
		t.Chain = map[[2]int64]hashchain.Pos{}
		for _, r := range rows {
			if r.Chain.Origin != "" {
				t.Chain[[2]int64{int64(r.File), r.Row}] = r.Chain
			}
		}
	}
	if cmd.Bool("clocks") {
		if t.Clock, err = deviceClock(ctx, in.dir, d.ID); err != nil {
			return failed("timeline", err)
		}
	}
	if outside > 0 && !cmd.Bool("quiet") {
		fmt.Fprintf(cmd.Root().ErrWriter, "stormaudit: timeline: %d of the device's records are outside --since/--until and not shown\n", outside)
	}
	w := cmd.Root().Writer
	if format == "json" {
		return report.TimelineJSON(w, t)
	}
	return report.TimelineText(w, t)
}

// deviceClock returns the offsets a check of the dataset in dir finds of
// the device id's clock (against the fleet's incidents, and a broker log
// stored with the dataset): what its times are corrected by.
func deviceClock(ctx context.Context, dir, id string) ([]analyze.ClockOffset, error) {
	res, err := analyze.Check(dir, analyze.Options{Context: ctx})
	if err != nil || res.Summary.Fleet == nil {
		return nil, err
	}
	var offs []analyze.ClockOffset
	for _, o := range res.Summary.Fleet.ClockOffsets {
		if o.Device == id {
			offs = append(offs, o)
		}
	}
	return offs, nil
}
