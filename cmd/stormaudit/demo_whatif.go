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
	for _, line := range whatIfWhy(names, stats, whatIfOutage) {
		fmt.Fprintf(out, "   %s\n", line)
	}
}

// whatIfWhy says what the what-if table's figures mean where they seem
// to contradict each other: a busiest second that came while the broker
// was down (outage long), which it never saw, and a policy that is
// gentler on the return but slower to recover.
func whatIfWhy(names []string, stats []simulate.Stats, outage time.Duration) []string {
	var out []string
	for i, st := range stats {
		if st.PeakAt < outage && st.PeakPerS > st.PeakUpPerS {
			out = append(out, fmt.Sprintf("%s: its busiest second came %v after the drop, while the broker was down: "+
				"every device's first retries, which nothing answered; the broker itself saw at most %d a second.", names[i], st.PeakAt, st.PeakUpPerS))
		}
	}
	for i := range stats {
		for j := range stats {
			a, b := stats[i], stats[j]
			if a.PeakUpPerS < b.PeakUpPerS && a.TTR99 > b.TTR99 {
				out = append(out, fmt.Sprintf("%s: its p99 time to recover is %v longer than %s's: each device waits out a "+
					"random draw, up to the cap, instead of all at once; the price of %d fewer socket-opens a second on the "+
					"broker's return and %d fewer refused over capacity.", names[i], (a.TTR99-b.TTR99).Round(time.Millisecond),
					names[j], b.PeakUpPerS-a.PeakUpPerS, b.RefusedOverload-a.RefusedOverload))
			}
		}
	}
	return out
}
