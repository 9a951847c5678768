package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stormaudit/stormaudit/analyze"
)

// JUnitOptions configure JUnit.
type JUnitOptions struct {
	// FailOn is the least severity that fails a testcase; findings below
	// it are listed in a passing testcase's system-out. The zero value
	// fails on every finding; analyze.Error+1 on none.
	FailOn analyze.Severity
	// Devices, when not nil, lists every device of the log, so that each
	// device without findings of a rule gets a passing testcase of its
	// own. When nil they are one testcase, "N other devices".
	Devices []string
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit writes the result as a JUnit XML report (see the package
// documentation).
func JUnit(w io.Writer, r *analyze.Result, opts JUnitOptions) error {
	byRule := map[string]map[string][]analyze.Finding{}
	for _, f := range r.Findings {
		if byRule[f.Rule] == nil {
			byRule[f.Rule] = map[string][]analyze.Finding{}
		}
		byRule[f.Rule][f.Device] = append(byRule[f.Rule][f.Device], f)
	}
	doc := junitSuites{Name: "stormaudit"}
	for _, ri := range rulesOf(r) {
		s := junitSuiteOf(r, ri, byRule[ri.ID], opts)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Suites = append(doc.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitSuiteOf makes a rule's testsuite: its flagged devices (the fleet
// first), then the others.
func junitSuiteOf(r *analyze.Result, ri analyze.RuleInfo, byDevice map[string][]analyze.Finding, opts JUnitOptions) junitSuite {
	s := junitSuite{Name: ri.ID, Properties: []junitProperty{{"title", ri.Title}, {"severity", ri.Severity.String()}}}
	devices := make([]string, 0, len(byDevice))
	for d := range byDevice {
		devices = append(devices, d)
	}
	slices.SortFunc(devices, func(a, b string) int {
		if (a == analyze.Fleet) != (b == analyze.Fleet) {
			if a == analyze.Fleet {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	flagged := 0
	for _, d := range devices {
		s.Cases = append(s.Cases, junitCaseOf(r, ri.ID, d, byDevice[d], opts.FailOn))
		if d != analyze.Fleet {
			flagged++
		}
	}
	if opts.Devices != nil {
		for _, d := range opts.Devices {
			if _, ok := byDevice[d]; !ok {
				s.Cases = append(s.Cases, junitCase{Name: d, Classname: ri.ID})
			}
		}
	} else if others := r.Summary.Devices - flagged; others > 0 {
		s.Cases = append(s.Cases, junitCase{Name: fmt.Sprintf("%d other %s", others, pluralWord(others, "device")), Classname: ri.ID})
	}
	s.Tests = len(s.Cases)
	for _, c := range s.Cases {
		if c.Failure != nil {
			s.Failures++
		}
	}
	return s
}

// junitCaseOf makes the testcase of one device's findings of one rule.
func junitCaseOf(r *analyze.Result, rule, device string, fs []analyze.Finding, failOn analyze.Severity) junitCase {
	c := junitCase{Name: device, Classname: rule}
	var b strings.Builder
	worst := fs[0]
	for _, f := range fs {
		fmt.Fprintf(&b, "%s %s: %s\n", f.Severity, spanText(f.Start, f.End), f.Message)
		if f.Explanation != "" {
			fmt.Fprintf(&b, "  %s\n", f.Explanation)
		}
		if len(f.Records) > 0 {
			fmt.Fprintf(&b, "  records: %s\n", recordsText(r.Sources, f.Records, -1))
		}
		if f.Severity > worst.Severity {
			worst = f
		}
	}
	if worst.Severity >= failOn {
		c.Failure = &junitFailure{Message: worst.Message, Type: worst.Severity.String(), Text: b.String()}
	} else {
		c.SystemOut = b.String()
	}
	return c
}
