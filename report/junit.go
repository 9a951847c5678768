package report

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"github.com/stormaudit/stormaudit/internal/safe"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

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
	// Name, when set, names a device of Devices in its passing test case
	// (analyze.DeviceName: no credential a client id holds).
	Name func(string) string
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
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

// junitSkipped marks the testcases of a rule that could not run.
type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// JUnit writes the result as a JUnit XML report (see the package
// documentation).
func JUnit(w io.Writer, r *analyze.Result, opts JUnitOptions) error {
	// C1 and bidirectional controls a device wrote reach no viewer raw
	e := safe.EscapeWriter(w, safe.XMLEscape)
	err := writeJUnit(e, r, opts)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeJUnit writes what JUnit documents, before its controls are escaped.
func writeJUnit(w io.Writer, r *analyze.Result, opts JUnitOptions) error {
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
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	return doc.write(w)
}

// write writes the document as encoding/xml would, indented by two
// spaces, without its reflection: a fleet's worth of testcases costs less
// than the check that found them.
func (doc *junitSuites) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var b []byte
	b = append(b, xml.Header...)
	b = append(b, `<testsuites name="`...)
	b = appendXML(b, doc.Name)
	b = appendCounts(b, doc.Tests, doc.Failures, doc.Errors, doc.Skipped)
	b = append(b, '>')
	for i := range doc.Suites {
		s := &doc.Suites[i]
		b = append(b, "\n  <testsuite name=\""...)
		b = appendXML(b, s.Name)
		b = appendCounts(b, s.Tests, s.Failures, s.Errors, s.Skipped)
		b = append(b, '>')
		if len(s.Properties) > 0 {
			b = append(b, "\n    <properties>"...)
			for _, p := range s.Properties {
				b = append(b, "\n      <property name=\""...)
				b = appendXML(b, p.Name)
				b = append(b, `" value="`...)
				b = appendXML(b, p.Value)
				b = append(b, `"></property>`...)
			}
			b = append(b, "\n    </properties>"...)
		}
		for _, c := range s.Cases {
			b = append(b, "\n    <testcase name=\""...)
			b = appendXML(b, c.Name)
			b = append(b, `" classname="`...)
			b = appendXML(b, c.Classname)
			b = append(b, `">`...)
			if f := c.Failure; f != nil {
				b = append(b, "\n      <failure message=\""...)
				b = appendXML(b, f.Message)
				b = append(b, `" type="`...)
				b = appendXML(b, f.Type)
				b = append(b, `">`...)
				b = appendXML(b, f.Text)
				b = append(b, `</failure>`...)
			}
			if k := c.Skipped; k != nil {
				b = append(b, "\n      <skipped message=\""...)
				b = appendXML(b, k.Message)
				b = append(b, `"></skipped>`...)
			}
			if c.SystemOut != "" {
				b = append(b, "\n      <system-out>"...)
				b = appendXML(b, c.SystemOut)
				b = append(b, `</system-out>`...)
			}
			if c.Failure != nil || c.Skipped != nil || c.SystemOut != "" {
				b = append(b, "\n    "...)
			}
			b = append(b, `</testcase>`...)
			if len(b) > 1<<16 {
				if _, err := bw.Write(b); err != nil {
					return err
				}
				b = b[:0]
			}
		}
		b = append(b, "\n  </testsuite>"...)
	}
	b = append(b, "\n</testsuites>\n"...)
	if _, err := bw.Write(b); err != nil {
		return err
	}
	return bw.Flush()
}

// appendCounts appends the count attributes of a suite, closing the name
// attribute before them.
func appendCounts(b []byte, tests, failures, errs, skipped int) []byte {
	b = append(b, `" tests="`...)
	b = strconv.AppendInt(b, int64(tests), 10)
	b = append(b, `" failures="`...)
	b = strconv.AppendInt(b, int64(failures), 10)
	b = append(b, `" errors="`...)
	b = strconv.AppendInt(b, int64(errs), 10)
	b = append(b, `" skipped="`...)
	b = strconv.AppendInt(b, int64(skipped), 10)
	return append(b, '"')
}

// appendXML appends s escaped as encoding/xml escapes text and attribute
// values: & < > " ' and tab, newline and carriage return as character
// references, and what XML 1.0 cannot hold (other controls, invalid
// UTF-8, U+FFFE and U+FFFF) as U+FFFD.
func appendXML(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && xmlPlain[c] {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		if c < utf8.RuneSelf {
			b = append(b, xmlEscapes[c]...)
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r == 0xFFFE || r == 0xFFFF {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
		start = i
	}
	return append(b, s[start:]...)
}

// xmlPlain marks the ASCII bytes appendXML copies as they are;
// xmlEscapes holds what it writes for the others.
var xmlPlain, xmlEscapes = func() (plain [utf8.RuneSelf]bool, esc [utf8.RuneSelf]string) {
	for c := range utf8.RuneSelf {
		plain[c] = c >= 0x20
		esc[c] = "\uFFFD"
	}
	for c, e := range map[byte]string{'&': "&amp;", '<': "&lt;", '>': "&gt;", '"': "&#34;", '\'': "&#39;",
		'\t': "&#x9;", '\n': "&#xA;", '\r': "&#xD;"} {
		plain[c], esc[c] = false, e
	}
	return plain, esc
}()

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
			if opts.Name != nil {
				d = opts.Name(d)
			}
			if _, ok := byDevice[d]; !ok {
				s.Cases = append(s.Cases, junitCase{Name: d, Classname: ri.ID})
			}
		}
	} else if others := r.Summary.Devices - flagged; others > 0 {
		s.Cases = append(s.Cases, junitCase{Name: fmt.Sprintf("%d other %s", others, pluralWord(others, "device")), Classname: ri.ID})
	}
	if why, ok := skipReason(r, ri.ID); ok {
		for i := range s.Cases {
			s.Cases[i].Skipped = &junitSkipped{Message: why}
		}
		s.Skipped = len(s.Cases)
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
		if x := f.Explained(); x != "" {
			fmt.Fprintf(&b, "  %s\n", x)
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
