package analyze

import (
	"cmp"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/stormaudit/stormaudit/policy"
)

// Options configure a check.
type Options struct {
	// Policy is the declared policy, or nil to infer what the log shows.
	Policy *policy.Policy
	// PolicyName says where Policy came from (a file or a preset), for
	// the summary.
	PolicyName string
	// Window is the width of the windows socket-opens are counted in
	// (DefaultWindow if 0).
	Window time.Duration
	// Observe, when set, is called with each device after the rules have
	// seen it, in dataset order: a front end gathers what it shows in the
	// check's own pass. The device and its slices are valid only during
	// the call, as for Rule.Device.
	Observe func(d *Device)
}

// Result is the outcome of a check: the findings and what they rest on.
type Result struct {
	Dataset  string
	Files    []string // the dataset's Parquet files, which Ref.File indexes
	Sources  []string // the inputs records were read from, which Ref.Source indexes
	Rules    []RuleInfo
	Findings []Finding // worst first: by severity, rule, device, start
	Summary  Summary
}

// Summary sums a check up.
type Summary struct {
	Devices    int
	Records    int64
	Rejected   int64          // lines rejected at ingest
	ByRule     map[string]int // findings by rule id
	BySeverity map[string]int // findings by severity name
	Policy     PolicyInfo
	Fleet      *FleetStats
	// Notes say what rules could not check, and why.
	Notes []string
}

// PolicyInfo says which policy the log was checked against.
type PolicyInfo struct {
	Source string         // "declared", "inferred" or "none"
	Name   string         // the file or preset, when declared
	Policy *policy.Policy // nil when none
	// Inferred lists the keys inferred from the log, when inferred.
	Inferred []string `json:",omitempty"`
}

// Check runs every rule over the dataset in dir.
//
// The rules run in parallel: each device, once built, is handed to
// 2×GOMAXPROCS groups of rules (more groups than cores, so that the
// scheduler evens out their unequal costs) and to the fleet's counters,
// each on a
// goroutine of its own, and every rule reports into a Context of its own;
// then every rule's Finish runs on a goroutine of its own. The findings
// and notes are merged in catalogue order, so the result does not depend
// on the scheduling.
func Check(dir string, opts Options) (*Result, error) {
	c := &Context{Policy: opts.Policy, End: NoTime}
	info := PolicyInfo{Source: "declared", Name: opts.PolicyName, Policy: opts.Policy}
	if opts.Policy == nil {
		p, keys, err := infer(dir)
		if err != nil {
			return nil, err
		}
		info = PolicyInfo{Source: "none"}
		if p != nil {
			c.Policy, c.Inferred = p, true
			info = PolicyInfo{Source: "inferred", Policy: p, Inferred: keys}
		}
	}
	rules := Rules()
	ctxs := make([]*Context, len(rules))
	for i := range ctxs {
		ctxs[i] = &Context{Policy: c.Policy, Inferred: c.Inferred, End: NoTime}
	}
	fc := newFleetCounter(opts.Window)
	var moved, movedDevices int
	var movedGap int64
	fleet := func(d *Device) {
		fc.add(d)
		if d.Reordered > 0 {
			moved, movedDevices, movedGap = moved+d.Reordered, movedDevices+1, max(movedGap, d.ReorderGap)
		}
		for i := range d.Events {
			c.End = max(c.End, d.Events[i].At) // the device's last record need not be its latest
		}
		if opts.Observe != nil {
			opts.Observe(d)
		}
	}
	consumers := []func(*Device){fleet}
	for _, group := range ruleGroups(len(rules), 2*runtime.GOMAXPROCS(0)) {
		consumers = append(consumers, func(d *Device) {
			for _, i := range group {
				rules[i].Device(ctxs[i], d)
			}
		})
	}
	man, sources, err := fanOut(dir, consumers)
	if err != nil {
		return nil, err
	}
	c.Dataset, c.Manifest = dir, man
	c.Fleet = fc.stats()
	if moved > 0 {
		c.Note("timelines", fmt.Sprintf("%s on %s came just after a counter reset it caused, written up to %s before it "+
			"(two threads of one client writing out of order); judged in the order they happened", nOf(moved, "connected record"),
			nOf(movedDevices, "device"), time.Duration(movedGap).Round(time.Microsecond)))
	}
	var wg sync.WaitGroup
	for i, r := range rules {
		rc := ctxs[i]
		rc.Fleet, rc.End, rc.Dataset, rc.Manifest = c.Fleet, c.End, dir, man
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Finish(rc)
		}()
	}
	wg.Wait()
	for _, rc := range ctxs {
		c.findings = append(c.findings, rc.findings...)
		for _, n := range rc.notes {
			c.note(n)
		}
	}
	res := &Result{Dataset: dir, Sources: sources, Findings: c.findings}
	for _, f := range man.Files {
		res.Files = append(res.Files, filepath.Join(dir, f.Name))
	}
	for _, r := range rules {
		res.Rules = append(res.Rules, r.Info())
	}
	sortFindings(res.Findings)
	res.Summary = Summary{Devices: c.Fleet.Devices, Records: c.Fleet.Records, Rejected: man.Totals.Rejected,
		ByRule: map[string]int{}, BySeverity: map[string]int{}, Policy: info, Fleet: c.Fleet, Notes: c.notes}
	for _, f := range res.Findings {
		res.Summary.ByRule[f.Rule]++
		res.Summary.BySeverity[f.Severity.String()]++
	}
	return res, nil
}

// ruleGroups splits the indices of n rules into at most k groups, dealt
// round-robin.
func ruleGroups(n, k int) [][]int {
	k = max(1, min(k, n))
	groups := make([][]int, k)
	for i := range n {
		groups[i%k] = append(groups[i%k], i)
	}
	return groups
}

func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Device, b.Device), cmp.Compare(a.Start, b.Start))
	})
}

// Worst returns the highest severity among the findings, 0 if none.
func (r *Result) Worst() Severity {
	var w Severity
	for _, f := range r.Findings {
		w = max(w, f.Severity)
	}
	return w
}

// Rules returns a fresh instance of every rule, in catalogue order.
func Rules() []Rule {
	var rs []Rule
	for _, mk := range catalogue {
		rs = append(rs, mk())
	}
	return rs
}

// catalogue makes the rules, in the order of docs/rules.md.
var catalogue []func() Rule

// register adds a rule to the catalogue; rule files call it from init.
func register(mk func() Rule) { catalogue = append(catalogue, mk) }
