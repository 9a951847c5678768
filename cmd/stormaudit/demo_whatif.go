package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/replay"
	"github.com/stormaudit/stormaudit/report"
	"github.com/stormaudit/stormaudit/simulate"
)

// The what-if part of the demo: one outage, one fleet, two policies.
const (
	whatIfDevices  = 2000
	whatIfOutage   = time.Minute
	whatIfCapacity = 100
	whatIfSeed     = 1
)

// demoCheck checks the sample dataset against the reference client's
// policy, as "stormaudit check --policy full-jitter DATASET" would, and
// prints the counts and each rule's worst finding.
func demoCheck(out io.Writer, ds string) (*analyze.Result, error) {
	fmt.Fprintf(out, "6. stormaudit check --policy full-jitter %s\n", ds)
	pol, err := policy.Preset("full-jitter")
	if err != nil {
		return nil, failed("demo", err)
	}
	res, err := analyze.Check(ds, analyze.Options{Policy: &pol, PolicyName: "full-jitter"})
	if err != nil {
		return nil, failed("demo: check", err)
	}
	var b bytes.Buffer
	if err := report.Text(&b, res, report.TextOptions{PerRule: 1, Records: 3}); err != nil {
		return nil, failed("demo: check", err)
	}
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			fmt.Fprint(out, "   "+line)
		}
	}
	return res, nil
}

// demoWhatIf simulates the same outage under the fixed and full-jitter
// presets (replay.SimulateWhatIf), ingests both, and prints the figures
// side by side.
func demoWhatIf(ctx context.Context, out io.Writer, dir string) (*replay.SimulatedWhatIf, error) {
	var pols []policy.Policy
	for _, name := range []string{"fixed", "full-jitter"} {
		pol, err := policy.Preset(name)
		if err != nil {
			return nil, failed("demo", err)
		}
		pols = append(pols, pol)
	}
	fleet := simulate.Config{Devices: whatIfDevices, Outage: whatIfOutage, Seed: whatIfSeed, Capacity: whatIfCapacity}
	w, err := replay.SimulateWhatIf(ctx, fleet, pols, func(i int, cfg simulate.Config) (simulate.Stats, error) {
		ds := filepath.Join(dir, "whatif-"+cfg.Policy.Name)
		fmt.Fprintf(out, "%d. stormaudit simulate --devices %d --outage %v --capacity %d --policy %s --seed %d --dataset %s\n",
			7+i, cfg.Devices, cfg.Outage, cfg.Capacity, cfg.Policy.Name, cfg.Seed, ds)
		st, man, err := simulateDataset(ctx, cfg, ds)
		if err != nil {
			return st, err
		}
		fmt.Fprintf(out, "   %d records of %d devices in %s\n", man.Rows, st.Devices, ds)
		return st, nil
	})
	var ee *exitError
	if errors.As(err, &ee) { // a run's, as simulateDataset says it
		return nil, err
	}
	if err != nil {
		return nil, failed("demo: what-if", err)
	}
	fmt.Fprintf(out, "9. the same outage (%d devices, broker down %v, accepting %d connects/s) under both policies:\n",
		fleet.Devices, fleet.Outage, fleet.Capacity)
	printWhatIf(out, w)
	return w, nil
}

// printWhatIf prints the runs' figures side by side, then what they mean
// where they seem to contradict each other.
func printWhatIf(out io.Writer, w *replay.SimulatedWhatIf) {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	rows := []struct {
		label string
		cell  func(st simulate.Stats) string
	}{
		{"on its return: socket-opens/s", func(st simulate.Stats) string { return fmt.Sprint(st.PeakUpPerS) }},
		{"busiest second: socket-opens", func(st simulate.Stats) string { return fmt.Sprint(st.PeakPerS) }},
		{"  at (from the drop)", func(st simulate.Stats) string { return st.PeakAt.String() }},
		{"socket-opens in all (work)", func(st simulate.Stats) string { return fmt.Sprint(st.Attempts) }},
		{"refused over capacity", func(st simulate.Stats) string { return fmt.Sprint(st.RefusedOverload) }},
		{"recovered", func(st simulate.Stats) string { return fmt.Sprintf("%d of %d", st.Recovered, st.Devices) }},
		{"time to recover, p50", func(st simulate.Stats) string { return ms(st.TTR50) }},
		{"time to recover, p99", func(st simulate.Stats) string { return ms(st.TTR99) }},
		{"time to recover, max", func(st simulate.Stats) string { return ms(st.TTRMax) }},
	}
	fmt.Fprintf(out, "   %-30s", "peaks, then work and recovery")
	for _, r := range w.Runs {
		fmt.Fprintf(out, " %14s", r.Policy)
	}
	fmt.Fprintln(out)
	for _, row := range rows {
		fmt.Fprintf(out, "   %-30s", row.label)
		for _, r := range w.Runs {
			fmt.Fprintf(out, " %14s", row.cell(r.Stats))
		}
		fmt.Fprintln(out)
	}
	for _, line := range w.Why() {
		fmt.Fprintf(out, "   %s\n", line)
	}
}
