package analyze

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stormaudit/stormaudit/dataset"
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
	// Disabled names rules that do not run: they are not in the
	// result's rules, and have no findings.
	Disabled map[string]bool
	// Severity gives rules another severity than their own: every finding
	// of the rule, and its RuleInfo, have it.
	Severity map[string]Severity
	// Thresholds sets rules' thresholds (see Tunable), by rule id and
	// name; the values must be valid (CheckThreshold).
	Thresholds map[string]map[string]float64
	// Inference, with no Policy, is what an earlier NewSplit of the same
	// dataset inferred (Split.Inference), taken instead of inferring it
	// again: the workers of a split check take their driver's.
	Inference *Inference
	// Context, when set, stops the check between two devices once it is
	// done (its cause is the error); nil: never.
	Context context.Context
	// Since and Until, when set, bound the records judged by recorded_at:
	// those recorded before Since or at or after Until are left out (as
	// if the log began at Since and ended at Until) and counted in
	// Summary.Outside.
	Since, Until time.Time
	// Broker holds the broker's own logs, the second witness: with them
	// the check pairs each device's connected records with the broker's
	// accepts (clock offsets, and the rules that need a broker log), and
	// says what the broker saw of each incident. Without them, a check of
	// a dataset takes the broker logs stored with it (ingest --broker-log).
	Broker []*BrokerLog
	// LazyExplanations leaves the findings' explanations that rules
	// defer to be written when they are read (Finding.Explained and
	// Finding.AppendExplanation, which package report's writers call): a
	// text report that prints a few findings of each rule writes a few
	// explanations, and JSON appends each into its encoding on every
	// core. Without it every explanation is written as the devices are
	// read, before the check returns.
	LazyExplanations bool
}

// Inference is the policy inferred from a log: nil when none could be,
// and the keys inferred.
type Inference struct {
	Policy *policy.Policy
	Keys   []string
	// Basis says what the policy rests on: how many draws, whether its
	// ceilings and cap were recorded or estimated (inference.basis).
	Basis string `json:",omitempty"`
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
	Devices  int
	Records  int64
	Rejected int64 // lines rejected at ingest
	Outside  int64 // records left out by Options.Since and Until
	// Since and Until are Options' (zero when unbounded).
	Since, Until time.Time
	ByRule       map[string]int // findings by rule id
	BySeverity   map[string]int // findings by severity name
	Policy       PolicyInfo
	Fleet        *FleetStats
	// Notes say what rules could not check, and why.
	Notes []string
	// NotRun lists, in catalogue order, the rules that did not run at
	// all: those that need a broker log none was given for ("need
	// --broker-log"), and those Options.Disabled names ("disabled").
	NotRun []Skip
	// Skipped lists, in catalogue order, the rules that could not run
	// at all (a policy key they need is neither declared nor inferred,
	// or what they judge against is absent) and found nothing: they
	// are not passing rules.
	Skipped []Skip
}

// Skip is a rule that did not run, and why.
type Skip struct {
	Rule   string
	Reason string
}

// PolicyInfo says which policy the log was checked against.
type PolicyInfo struct {
	Source string         // "declared", "inferred" or "none"
	Name   string         // the file or preset, when declared
	Policy *policy.Policy // nil when none
	// Inferred lists the keys inferred from the log, when inferred, and
	// Basis what they rest on, so how far they can be trusted.
	Inferred []string `json:",omitempty"`
	Basis    string   `json:",omitempty"`
}

// Check runs every rule over the dataset in dir.
//
// The rules run in parallel: each device, once built, is handed to
// 2×GOMAXPROCS groups of rules (more groups than cores, so that the
// scheduler evens out their unequal costs) and to the fleet's counters,
// each on a goroutine of its own, and every rule reports into a Context
// of its own; then every rule's Finish runs on a goroutine of its own.
// The findings and notes are merged in catalogue order, so the result
// does not depend on the scheduling.
func Check(dir string, opts Options) (*Result, error) {
	s, err := NewSplit(dir, opts)
	if err != nil {
		return nil, err
	}
	p, err := s.run(-1, nil)
	if err != nil {
		return nil, err
	}
	return s.Finish([]*Partial{p})
}

// checker runs the rules over devices handed to its consumers, then
// makes the result.
type checker struct {
	opts  Options
	c     *Context // the check's own: policy, fleet, end, notes
	info  PolicyInfo
	rules []Rule
	ctxs  []*Context // each rule's
	fc    *fleetCounter
	// changedLogs says of each stored broker log that no longer matches
	// the manifest's digest (storedBrokerLogs), noted once
	changedLogs []string
	// unlisted is a file in the dataset's directory that its manifest
	// does not list (dataset.List), noted once; "" if none
	unlisted string

	moved, movedDevices int
	movedGap            int64
	win                 *window // Options.Since and Until; nil: none
}

func newChecker(opts Options) *checker {
	var rules []Rule
	for _, r := range Rules() {
		if r.Info().NeedsBrokerLog && len(opts.Broker) == 0 {
			continue // it judges nothing without a broker log
		}
		if !opts.Disabled[r.Info().ID] {
			rules = append(rules, r)
		}
	}
	setThresholds(rules, opts.Thresholds)
	k := &checker{opts: opts, c: &Context{Policy: opts.Policy, PolicyName: opts.PolicyName, End: NoTime}, rules: rules, fc: newFleetCounter(opts.Window),
		info: PolicyInfo{Source: "declared", Name: opts.PolicyName, Policy: opts.Policy}}
	k.fc.Wit.On, k.fc.broker = len(opts.Broker) > 0, opts.Broker
	k.win = newWindow(opts.Since, opts.Until)
	return k
}

// inferred sets the policy inferred from the log (nil: none could be).
func (k *checker) inferred(in *Inference) {
	k.info = PolicyInfo{Source: "none"}
	if in.Policy != nil {
		k.c.Policy, k.c.Inferred = in.Policy, true
		k.info = PolicyInfo{Source: "inferred", Policy: in.Policy, Inferred: in.Keys, Basis: in.Basis}
	}
}

// start makes every rule's context, once the policy is known.
func (k *checker) start() {
	k.ctxs = make([]*Context, len(k.rules))
	for i := range k.ctxs {
		k.ctxs[i] = &Context{Policy: k.c.Policy, Inferred: k.c.Inferred, PolicyName: k.c.PolicyName, End: NoTime, lazy: k.opts.LazyExplanations}
	}
}

// consumers returns the functions that each device goes to, each to run
// on a goroutine of its own: the fleet's counters, and the rule groups.
func (k *checker) consumers() []func(*Device) {
	c := k.c
	if k.ctxs == nil {
		k.start()
	}
	fleet := func(d *Device) {
		k.fc.add(d)
		if d.Reordered > 0 {
			k.moved, k.movedDevices, k.movedGap = k.moved+d.Reordered, k.movedDevices+1, max(k.movedGap, d.ReorderGap)
		}
		for i := range d.Events {
			c.End = max(c.End, d.Events[i].At) // the device's last record need not be its latest
		}
		if k.opts.Observe != nil {
			k.opts.Observe(d)
		}
	}
	consumers := []func(*Device){fleet}
	for _, group := range ruleGroups(len(k.rules), 2*runtime.GOMAXPROCS(0)) {
		consumers = append(consumers, func(d *Device) {
			for _, i := range group {
				k.rules[i].Device(k.ctxs[i], d)
			}
		})
	}
	return consumers
}

// finish runs every rule's Finish, once every device has been consumed,
// and makes the result. dir holds the rejects file (rejects.ndjson) of
// the records man accounts for.
func (k *checker) finish(dir string, man *dataset.Manifest, sources []string) *Result {
	c := k.c
	c.Dataset, c.Manifest = dir, man
	k.fc.Inc.keepalive = k.keepalive()
	k.fc.broker = k.opts.Broker // a decoded partial's fleet counter has none
	for _, ch := range k.changedLogs {
		c.Note("broker-log", ch)
	}
	if k.unlisted != "" {
		c.Note("dataset", fmt.Sprintf("%s is %s: this check did not read it, and verify refuses the dataset", k.unlisted, dataset.UnlistedWhat(k.unlisted)))
	}
	k.fc.Inc.end = c.End
	if tailProbe != nil {
		tailProbe(false)
		defer tailProbe(true)
	}
	var wg sync.WaitGroup
	for _, r := range k.rules {
		if p, ok := r.(presorter); ok {
			wg.Go(p.presort)
		}
	}
	c.Fleet = k.fc.stats()
	wg.Wait()
	if w := c.Fleet.Witness; w != nil {
		for _, l := range w.Logs {
			if l.Rejected > 0 { // never dropped silently
				c.Note("broker-log", fmt.Sprintf("%s: %s of %d not read (the first: %s)", l.Name, nOf(l.Rejected, "line"), l.Lines, l.FirstReject))
			}
		}
	}
	if k.moved > 0 {
		c.Note("timelines", fmt.Sprintf("%s on %s came just after a counter reset it caused, written up to %s before it "+
			"(two threads of one client writing out of order); judged in the order they happened", nOf(k.moved, "connected record"),
			nOf(k.movedDevices, "device"), time.Duration(k.movedGap).Round(time.Microsecond)))
	}
	for i, r := range k.rules {
		rc := k.ctxs[i]
		rc.Fleet, rc.End, rc.Dataset, rc.Manifest, rc.Sources = c.Fleet, c.End, dir, man, sources
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Finish(rc)
		}()
	}
	wg.Wait()
	if c.Fleet != nil {
		c.Fleet.fc = nil // the ids are named: the result does not hold them
	}
	runs := [][]Finding{c.findings}
	for i, rc := range k.ctxs {
		if sev, ok := k.opts.Severity[k.rules[i].Info().ID]; ok {
			for j := range rc.findings {
				rc.findings[j].Severity = sev
			}
		}
		runs = append(runs, rc.findings)
		for _, n := range rc.notes {
			c.note(n)
		}
	}
	res := &Result{Dataset: dir, Sources: sources, Findings: sortedFindings(runs)}
	for _, r := range k.rules {
		ri := r.Info()
		if sev, ok := k.opts.Severity[ri.ID]; ok {
			ri.Severity = sev
		}
		res.Rules = append(res.Rules, ri)
	}
	res.Summary = Summary{Devices: c.Fleet.Devices, Records: c.Fleet.Records, Rejected: man.Totals.Rejected, Outside: k.win.left(), Since: k.opts.Since, Until: k.opts.Until,
		ByRule: map[string]int{}, BySeverity: map[string]int{}, Policy: k.info, Fleet: c.Fleet, Notes: c.notes}
	for _, rule := range Rules() {
		switch info := rule.Info(); {
		case k.opts.Disabled[info.ID]:
			res.Summary.NotRun = append(res.Summary.NotRun, Skip{Rule: info.ID, Reason: "disabled"})
		case info.NeedsBrokerLog && len(k.opts.Broker) == 0:
			res.Summary.NotRun = append(res.Summary.NotRun, Skip{Rule: info.ID, Reason: "need --broker-log"})
		}
	}
	for i, fs := 0, res.Findings; i < len(fs); { // counted a run of one severity and rule at a time: they are sorted so
		j := i + 1
		for j < len(fs) && fs[j].Severity == fs[i].Severity && fs[j].Rule == fs[i].Rule {
			j++
		}
		res.Summary.ByRule[fs[i].Rule] += j - i
		res.Summary.BySeverity[fs[i].Severity.String()] += j - i
		i = j
	}
	for i, rc := range k.ctxs {
		id := res.Rules[i].ID
		if why, ok := rc.skipped[id]; ok && res.Summary.ByRule[id] == 0 {
			res.Summary.Skipped = append(res.Summary.Skipped, Skip{Rule: id, Reason: why})
		}
	}
	return res
}

// keepalive returns the keepalive the declared policy sets, 0 if none.
func (k *checker) keepalive() time.Duration {
	if p := k.c.Policy; p != nil && !k.c.Inferred && p.Declared("keepalive_s") && p.KeepaliveS > 0 {
		return seconds(p.KeepaliveS)
	}
	return 0
}

// tailProbe, when a benchmark sets it, is called as the finishing step
// after the read begins (false) and when it ends (true).
var tailProbe func(end bool)

// A presorter sorts what its rule gathered from the devices, on a core
// of its own while the fleet's figures are reckoned: the part of its
// Finish that needs neither them nor the context. Finish sorts again
// only if it moves what was sorted (a clock offset).
type presorter interface{ presort() }

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

// sortedFindings returns the findings of runs, in the order a stable
// sort of them all, one run after another, by severity (worst first),
// rule, device and start gives. A run is one rule's findings, mostly in
// device order already (the devices are read in client id order) and of
// one or two severities: it gathers them by (severity, rule) as it
// copies them, and sorts only what is then out of device order.
func sortedFindings(runs [][]Finding) []Finding {
	type class struct {
		sev  Severity
		rule string
	}
	var classes []class
	has := make([][]class, len(runs)) // the classes of each run
	n := 0
	for r, run := range runs {
		n += len(run)
		for i := range run {
			if c := (class{run[i].Severity, run[i].Rule}); !slices.Contains(has[r], c) {
				has[r] = append(has[r], c)
				if !slices.Contains(classes, c) {
					classes = append(classes, c)
				}
			}
		}
	}
	if n == 0 {
		return nil
	}
	slices.SortFunc(classes, func(a, b class) int { return cmp.Or(cmp.Compare(b.sev, a.sev), cmp.Compare(a.rule, b.rule)) })
	out := make([]Finding, 0, n)
	for _, c := range classes {
		from := len(out)
		for r, run := range runs {
			switch {
			case !slices.Contains(has[r], c):
			case len(has[r]) == 1:
				out = append(out, run...)
			default:
				for i := range run {
					if run[i].Severity == c.sev && run[i].Rule == c.rule {
						out = append(out, run[i])
					}
				}
			}
		}
		if seg := out[from:]; !slices.IsSortedFunc(seg, compareFindings) {
			slices.SortStableFunc(seg, compareFindings)
		}
	}
	return out
}

// compareFindings orders findings by severity (worst first), rule,
// device and start.
func compareFindings(a, b Finding) int {
	if c := cmp.Or(cmp.Compare(b.Severity, a.Severity), strings.Compare(a.Rule, b.Rule)); c != 0 {
		return c
	}
	return cmp.Or(strings.Compare(a.Device, b.Device), cmp.Compare(a.Start, b.Start))
}

// Worst returns the highest severity among the findings, 0 if none.
func (r *Result) Worst() Severity {
	var w Severity
	for _, f := range r.Findings {
		w = max(w, f.Severity)
	}
	return w
}
