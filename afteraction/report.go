package afteraction

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/redact"
	"github.com/stormaudit/stormaudit/replay"
	"github.com/stormaudit/stormaudit/verify"
)

// Report is what an after-action report shows.
type Report struct {
	// Title heads the page; Generated and Version say when and by what
	// it was made.
	Title     string
	Generated time.Time
	Version   string
	// Dataset is the dataset analysed, "" when the report ingested audit
	// logs into a temporary one of its own.
	Dataset  string
	Manifest *dataset.Manifest
	// Verify is the verification of the dataset, nil when none ran (the
	// report read audit logs: what proves them is their collector logs'
	// verification at ingest, which Manifest records).
	Verify   *verify.Report
	Overview *analyze.Overview
	// Devices are the devices read in full from the dataset
	// (analyze.ReadDevice), by client_id: the worst (the strip chart's)
	// and those whose timelines the page shows.
	Devices map[string]*analyze.DeviceRecords
	// Timelines are the client ids of the devices whose timelines the
	// page shows, in order (Pick).
	Timelines []string
	// Replay is a replay's report, or a comparison's recorded and what-if
	// reports (replay.ReadJSON); nil when none was given.
	Replay []*replay.Report
}

// Options bound what a report shows, and so its size.
type Options struct {
	// PerRule is how many findings of each rule are shown (the worst
	// first); the others are counted.
	PerRule int
	// Worst is how many of the worst devices (Worst) the strip chart and
	// the timelines show, besides the devices of the findings shown.
	Worst int
	// Timelines is the most devices shown in full; Rows the most records
	// of each.
	Timelines, Rows int
	// Incidents is the most incidents that get a chart of their own.
	Incidents int
	// Redact, when set, replaces credentials and hardware identifiers in
	// every text of the page with its pseudonyms, and the page says what
	// it replaced.
	Redact *redact.Redactor
}

// DefaultOptions are the bounds a report has unless told otherwise: a
// fleet of 50,000 devices gives a report of a few megabytes.
var DefaultOptions = Options{PerRule: 10, Worst: 30, Timelines: 100, Rows: 60, Incidents: 5}

// Pick returns the client ids of the devices a report of ov shows in
// full: the worst opts.Worst devices (see Worst), then the devices of the
// findings shown, in the findings' order, opts.Timelines in all.
func Pick(ov *analyze.Overview, opts Options) []string {
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] && len(ids) < opts.Timelines && ov.Device(id) >= 0 {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, k := range Worst(ov, opts.Worst) {
		add(ov.Devices[k].ID)
	}
	for _, f := range shownFindings(ov.Result, opts.PerRule) {
		add(f.Device) // not the fleet: ov.Device finds no such device
	}
	return ids
}

// Worst returns the indices in ov.Devices of the n worst devices: by the
// worst severity of their findings, then their number of findings, then
// the longest time to recover, then failed socket-opens, then client_id.
// A device with no finding and no failed socket-open that never lost its
// connection and is not down at the end is never among them.
func Worst(ov *analyze.Overview, n int) []int {
	var ks []int
	for k, d := range ov.Devices {
		if d.Findings > 0 || d.Failed > 0 || d.Down || d.TTR > 0 {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, func(a, b int) int {
		x, y := &ov.Devices[a], &ov.Devices[b]
		return cmp.Or(cmp.Compare(y.Worst, x.Worst), cmp.Compare(y.Findings, x.Findings), cmp.Compare(y.TTR, x.TTR),
			cmp.Compare(y.Failed, x.Failed), cmp.Compare(x.ID, y.ID))
	})
	return ks[:min(n, len(ks))]
}

// shownFindings returns the findings a report shows: the first perRule
// of each rule (findings are sorted worst first within a rule).
func shownFindings(r *analyze.Result, perRule int) []analyze.Finding {
	var out []analyze.Finding
	n := map[string]int{}
	for _, f := range r.Findings {
		if n[f.Rule] < perRule {
			n[f.Rule]++
			out = append(out, f)
		}
	}
	return out
}

// Gather checks the dataset in dir (analyze.Survey with opts) and reads
// the devices the report shows in full; Verify, Replay and the page's
// headings are the caller's to set.
func Gather(dir string, opts analyze.Options, o Options) (*Report, error) {
	ov, err := analyze.Survey(dir, opts)
	if err != nil {
		return nil, err
	}
	man, err := dataset.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	rep := &Report{Overview: ov, Manifest: man, Dataset: dir, Devices: map[string]*analyze.DeviceRecords{}, Timelines: Pick(ov, o)}
	ids := slices.Clone(rep.Timelines)
	for _, k := range Worst(ov, o.Worst) {
		ids = append(ids, ov.Devices[k].ID)
	}
	for _, id := range ids {
		if rep.Devices[id] != nil {
			continue
		}
		d, err := analyze.ReadDevice(dir, id)
		if err != nil {
			return nil, fmt.Errorf("device %q: %w", id, err)
		}
		rep.Devices[id] = d
	}
	return rep, nil
}

// durationOf returns the time from from to to, ns.
func durationOf(from, to int64) time.Duration { return time.Duration(max(0, to-from)) }
