package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/policy"
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
		return nil, &exitError{code: 2, err: fmt.Errorf("demo: %w", err)}
	}
	res, err := analyze.Check(ds, analyze.Options{Policy: &pol, PolicyName: "full-jitter"})
	if err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("demo: check: %w", err)}
	}
	var b bytes.Buffer
	if err := report.Text(&b, res, report.TextOptions{PerRule: 1, Records: 3}); err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("demo: check: %w", err)}
	}
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			fmt.Fprint(out, "   "+line)
		}
	}
	return res, nil
}

// demoWhatIf simulates the same outage under the fixed and full-jitter
// presets, ingests both, and prints the figures side by side.
func demoWhatIf(ctx context.Context, out io.Writer, dir string) ([]simulate.Stats, error) {
	names := []string{"fixed", "full-jitter"}
	var stats []simulate.Stats
	for i, name := range names {
		pol, err := policy.Preset(name)
		if err != nil {
			return nil, &exitError{code: 2, err: fmt.Errorf("demo: %w", err)}
		}
		ds := filepath.Join(dir, "whatif-"+name)
		fmt.Fprintf(out, "%d. stormaudit simulate --devices %d --outage %v --capacity %d --policy %s --seed %d --dataset %s\n",
			7+i, whatIfDevices, whatIfOutage, whatIfCapacity, name, whatIfSeed, ds)
		cfg := simulate.Config{Devices: whatIfDevices, Outage: whatIfOutage, Policy: pol, Seed: whatIfSeed, Capacity: whatIfCapacity}
		st, man, err := simulateDataset(ctx, cfg, ds)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "   %d records of %d devices in %s\n", man.Rows, st.Devices, ds)
		stats = append(stats, st)
	}
	fmt.Fprintf(out, "9. the same outage (%d devices, broker down %v, accepting %d connects/s) under both policies:\n",
		whatIfDevices, whatIfOutage, whatIfCapacity)
	printWhatIf(out, names, stats)
	return stats, nil
}

func printWhatIf(out io.Writer, names []string, stats []simulate.Stats) {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	rows := []struct {
		label string
		cell  func(st simulate.Stats) string
	}{
		{"on its return: socket-opens/s", func(st simulate.Stats) string { return fmt.Sprint(st.PeakUpPerS) }},
		{"any time: socket-opens/s", func(st simulate.Stats) string { return fmt.Sprint(st.PeakPerS) }},
		{"socket-opens in all (work)", func(st simulate.Stats) string { return fmt.Sprint(st.Attempts) }},
		{"refused over capacity", func(st simulate.Stats) string { return fmt.Sprint(st.RefusedOverload) }},
		{"recovered", func(st simulate.Stats) string { return fmt.Sprintf("%d of %d", st.Recovered, st.Devices) }},
		{"time to recover, p50", func(st simulate.Stats) string { return ms(st.TTR50) }},
		{"time to recover, p99", func(st simulate.Stats) string { return ms(st.TTR99) }},
		{"time to recover, max", func(st simulate.Stats) string { return ms(st.TTRMax) }},
	}
	fmt.Fprintf(out, "   %-30s", "peaks, then work and recovery")
	for _, n := range names {
		fmt.Fprintf(out, " %14s", n)
	}
	fmt.Fprintln(out)
	for _, r := range rows {
		fmt.Fprintf(out, "   %-30s", r.label)
		for _, st := range stats {
			fmt.Fprintf(out, " %14s", r.cell(st))
		}
		fmt.Fprintln(out)
	}
}
