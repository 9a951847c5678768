package analyze

import (
	"cmp"
	"fmt"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/policy"
)

// Severity orders findings: Info < Warning < Error.
type Severity uint8

// The severities.
const (
	Info Severity = iota + 1
	Warning
	Error
)

var severityNames = [...]string{Info: "info", Warning: "warning", Error: "error"}

func (s Severity) String() string {
	if s == 0 || int(s) >= len(severityNames) {
		return fmt.Sprintf("Severity(%d)", uint8(s))
	}
	return severityNames[s]
}

// ParseSeverity parses "info", "warning" or "error".
func ParseSeverity(s string) (Severity, bool) {
	for v := Info; int(v) < len(severityNames); v++ {
		if severityNames[v] == s {
			return v, true
		}
	}
	return 0, false
}

// Fleet is the device name of findings about the whole fleet.
const Fleet = "fleet"

// MaxRefs is the most records a finding lists.
const MaxRefs = 10

// Finding is one violation of a rule.
type Finding struct {
	Rule string
	// Kind says which of its rule's findings it is, as a key that stays
	// when the message is reworded: the rule id, a slash and a short
	// kebab-case name, one for each distinct finding the rule reports
	// ("delay-bounds/delay-outside-bounds", "delay-bounds/ceiling-mismatch").
	// A finding's identity across runs (report's fingerprints, and so
	// baselines and code scanning alerts) rests on it, never on Message:
	// a new kind is a new finding, a renamed one orphans every baseline
	// entry of the old name.
	Kind     string
	Severity Severity
	Device   string // the client_id, or Fleet
	// Start and End bound the time the finding covers, Unix ns.
	Start, End int64
	// Message is one line; Explanation gives the numbers a reviewer can
	// check by hand (the values, the bound, the records). With
	// Options.LazyExplanations, Explanation may be left to be written
	// when it is read: read it with Explained.
	Message     string
	Explanation string
	// Records are the records it rests on, at most MaxRefs, the most
	// telling first.
	Records []Ref

	lazy func(prose) prose // appends the explanation, when it is left to be written
}

// explainLater sets f's explanation to be what write appends when it is
// read; Context.Report writes it at once unless the check leaves
// explanations to be written (Options.LazyExplanations). write must hold
// copies of what it needs, never the Device or a pointer into it: the
// read reuses a device's buffers for the next.
func (f *Finding) explainLater(write func(prose) prose) {
	f.Explanation, f.lazy = "", write
}

// Explained returns f's explanation, writing it if it was left to be
// written (Options.LazyExplanations). It may be called from several
// goroutines at once: it changes nothing.
func (f *Finding) Explained() string {
	if f.lazy != nil {
		return string(f.lazy(nil))
	}
	return f.Explanation
}

// AppendExplanation appends f's explanation to b, writing it there if it
// was left to be written: an encoder that writes every finding's
// explanation makes no string of each. Like Explained, it changes
// nothing of f.
func (f *Finding) AppendExplanation(b []byte) []byte {
	if f.lazy != nil {
		return f.lazy(b)
	}
	return append(b, f.Explanation...)
}

// explain writes the explanations left to be written of fs.
func explain(fs []Finding) {
	for i := range fs {
		if f := &fs[i]; f.lazy != nil {
			f.Explanation, f.lazy = f.Explained(), nil
		}
	}
}

// RuleInfo describes a rule.
type RuleInfo struct {
	ID       string   // stable id, used in every output format
	Severity Severity // the severity of its findings, unless a finding says otherwise
	Title    string   // one line
	Help     string   // what it flags and why it matters; docs/rules.md has the exact definition
	// Needs lists the policy keys the rule cannot run without, each
	// declared or, where the log shows it (Inferable), inferred: a check
	// without one skips the rule (Summary.Skipped). Each entry is a
	// list of keys any one of which will do.
	Needs [][]string
	// NeedsBrokerLog is whether the rule judges the broker's log
	// (Options.Broker): a check without one leaves it out.
	NeedsBrokerLog bool
	// Uses lists the policy keys that, declared, change what the rule
	// judges, beside those it needs.
	Uses []string
}

// Inferable reports whether the policy key can be inferred from a log
// when no policy declares it.
func Inferable(key string) bool { return inferredKeys[key] }

// Rule checks one invariant. A fresh Rule is made for every run, so a rule
// may keep state across devices.
type Rule interface {
	Info() RuleInfo
	// Device is called with each device, once built, in dataset order.
	// d and its slices are valid only during the call: the reader reuses
	// them for the next device, so a rule keeps copies of what it needs.
	Device(c *Context, d *Device)
	// Finish is called once after the last device, with the fleet's
	// statistics in c.Fleet.
	Finish(c *Context)
}

// Context is what a rule sees of the run.
type Context struct {
	// Policy is the policy the log is checked against, declared or
	// inferred (Summary.Policy says which), or nil when there is none.
	Policy *policy.Policy
	// Inferred reports whether Policy was inferred from the log.
	Inferred bool
	// PolicyName says where a declared Policy came from (a file or a
	// preset), for advice on a key it does not declare.
	PolicyName string
	// Fleet holds the fleet's statistics; complete only in Finish.
	Fleet *FleetStats
	// End is the time of the last record in the log, Unix ns.
	End int64
	// Sources names the inputs that Ref.Source indexes; set for Finish.
	Sources []string
	// Dataset is the dataset's directory and Manifest its manifest; both
	// are set for Finish.
	Dataset  string
	Manifest *dataset.Manifest

	findings []Finding
	notes    []string
	noted    map[string]bool
	skipped  map[string]string // rule -> why it could not run
	lazy     bool              // leave explanations to be written when read (Options.LazyExplanations)
}

// Report adds a finding. Records beyond MaxRefs are dropped. The
// finding must have a Kind of its rule (rule/name): in a test, one
// without panics, so that every rule's every finding is checked by the
// tests that make it.
func (c *Context) Report(f Finding) {
	if !validKind(f.Rule, f.Kind) && testing.Testing() {
		panic(fmt.Sprintf("analyze: a %s finding of kind %q (%q): want the rule id, a slash and a kebab-case name", f.Rule, f.Kind, f.Message))
	}
	if len(f.Records) > MaxRefs {
		f.Records = f.Records[:MaxRefs]
	}
	if f.lazy != nil && !c.lazy {
		f.Explanation, f.lazy = f.Explained(), nil // now, beside the rest of the device's work
	}
	c.findings = push(c.findings, f)
}

// Param returns the value of a policy key for rule, and whether it is
// known (declared, or inferred from the log). When it is not, the rule
// cannot run: Param records that once (Skip).
func (c *Context) Param(rule, key string, v func(*policy.Policy) float64) (float64, bool) {
	if c.Policy != nil && (c.Policy.Declared(key) || c.Inferred && inferredKeys[key]) {
		return v(c.Policy), true
	}
	c.Skip(rule, c.undeclared(key)+" to check it")
	return 0, false
}

// undeclared says that the policy key is neither declared nor inferred,
// and what would declare it: a policy file when none was given, the key
// added to the file that was.
func (c *Context) undeclared(key string) string {
	switch name := c.PolicyName; {
	case c.Policy == nil || c.Inferred:
		return key + " is not declared and cannot be inferred from the log: give --policy FILE declaring " + key
	case name == "":
		return key + " is not declared by the policy given and cannot be inferred from the log: declare " + key + " in it"
	case isPreset(name):
		return fmt.Sprintf("the preset %q does not declare %s, and the log cannot show it: give --policy FILE declaring %s", name, key, key)
	default:
		return fmt.Sprintf("%s is not declared in %s, and the log cannot show it: add %s to that file", key, name, key)
	}
}

// isPreset reports whether name is a built-in policy's.
func isPreset(name string) bool {
	_, err := policy.Preset(name)
	return err == nil
}

// Skip records, once, that rule cannot run, and why (as a note too). A
// rule that skips and reports nothing is listed in Summary.Skipped.
func (c *Context) Skip(rule, why string) {
	if c.skipped == nil {
		c.skipped = map[string]string{}
	}
	if _, ok := c.skipped[rule]; !ok {
		c.skipped[rule] = why
	}
	c.Note(rule, why)
}

// Note records, once, a remark of rule about what it could not check.
func (c *Context) Note(rule, text string) { c.note(rule + ": " + text) }

// note records the note k ("rule: text") once.
func (c *Context) note(k string) {
	if c.noted == nil {
		c.noted = map[string]bool{}
	}
	if !c.noted[k] {
		c.noted[k] = true
		c.notes = append(c.notes, k)
	}
}

// validKind reports whether kind is rule, a slash and a kebab-case name
// (lower-case letters, digits and single hyphens).
func validKind(rule, kind string) bool {
	name, ok := strings.CutPrefix(kind, rule+"/")
	if !ok || name == "" || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for _, r := range name {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

// compareLines orders records by input and line: an order that does not
// depend on how the dataset stores them (flat, or in buckets), for fleet
// findings to list the same records either way.
func compareLines(a, b Ref) int {
	return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Line, b.Line))
}
