package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/analyze"
)

type decodedJUnit struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Failures   int    `xml:"failures,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func junitOf(t *testing.T, r *analyze.Result, opts JUnitOptions) decodedJUnit {
	t.Helper()
	var b bytes.Buffer
	if err := JUnit(&b, r, opts); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), xml.Header) {
		t.Errorf("no XML header:\n%s", b.String())
	}
	var doc decodedJUnit
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, b.String())
	}
	return doc
}

// caseNames lists a suite's testcases as "name" or "name FAIL".
func caseNames(doc decodedJUnit, suite int) []string {
	var out []string
	for _, c := range doc.Suites[suite].Cases {
		s := c.Name
		if c.Failure != nil {
			s += " FAIL"
		}
		out = append(out, s)
	}
	return out
}

func TestJUnit(t *testing.T) {
	doc := junitOf(t, fixture(), JUnitOptions{FailOn: analyze.Warning})
	if doc.Name != "stormaudit" || len(doc.Suites) != 3 {
		t.Fatalf("got %q with %d suites", doc.Name, len(doc.Suites))
	}
	for i, want := range []string{
		"fleet FAIL|5 other devices",
		"dev-0002 FAIL|dev-0003 FAIL|3 other devices",
		"dev-0001 FAIL|dev-0002|3 other devices",
	} {
		if got := strings.Join(caseNames(doc, i), "|"); got != want {
			t.Errorf("suite %s: cases %s, want %s", doc.Suites[i].Name, got, want)
		}
	}
	tests, failures := 0, 0
	for _, s := range doc.Suites {
		if s.Tests != len(s.Cases) {
			t.Errorf("suite %s: tests=%d, %d testcases", s.Name, s.Tests, len(s.Cases))
		}
		tests += s.Tests
		failures += s.Failures
	}
	if doc.Tests != tests || doc.Failures != failures || failures != 4 || doc.Errors != 0 {
		t.Errorf("totals tests=%d failures=%d errors=%d; suites sum to %d, %d", doc.Tests, doc.Failures, doc.Errors, tests, failures)
	}
	s := doc.Suites[1]
	if s.Name != "delay-bounds" || s.Failures != 2 || s.Properties[0].Value != "a delay outside the policy's bounds" {
		t.Errorf("suite 1 = %+v", s)
	}
	c := s.Cases[0]
	if c.Classname != "delay-bounds" || c.Failure.Type != "error" || c.Failure.Message != "dev-0002 drew 41.2 s at attempt 3" ||
		!strings.Contains(c.Failure.Text, "records: logs/gw-a.ndjson:12, logs/gw-a.ndjson:14") {
		t.Errorf("case = %+v", c)
	}
	// dev-0002's info finding of hot-loop is below --fail-on: it passes
	// with the finding in its output.
	if c := doc.Suites[2].Cases[1]; c.Failure != nil || !strings.Contains(c.SystemOut, "retried twice at once") {
		t.Errorf("info case = %+v", c)
	}
}

func TestJUnitFailOn(t *testing.T) {
	for _, tt := range []struct {
		failOn analyze.Severity
		want   int
	}{{0, 5}, {analyze.Info, 5}, {analyze.Warning, 4}, {analyze.Error, 3}, {analyze.Error + 1, 0}} {
		if got := junitOf(t, fixture(), JUnitOptions{FailOn: tt.failOn}).Failures; got != tt.want {
			t.Errorf("FailOn %v: %d failures, want %d", tt.failOn, got, tt.want)
		}
	}
}

// TestJUnitDevices: with the device list, every device is a testcase.
func TestJUnitDevices(t *testing.T) {
	devices := []string{"dev-0001", "dev-0002", "dev-0003", "dev-0004", "dev-0005"}
	doc := junitOf(t, fixture(), JUnitOptions{Devices: devices})
	if got, want := strings.Join(caseNames(doc, 1), "|"), "dev-0002 FAIL|dev-0003 FAIL|dev-0001|dev-0004|dev-0005"; got != want {
		t.Errorf("cases %s, want %s", got, want)
	}
	if doc.Suites[0].Tests != 6 || doc.Tests != 6+5+5 {
		t.Errorf("tests = %d, %d", doc.Suites[0].Tests, doc.Tests)
	}
}

// TestJUnitEmpty: a clean log passes every rule.
func TestJUnitEmpty(t *testing.T) {
	doc := junitOf(t, empty(), JUnitOptions{})
	if len(doc.Suites) != 3 || doc.Tests != 3 || doc.Failures != 0 {
		t.Errorf("got %d suites, %d tests, %d failures", len(doc.Suites), doc.Tests, doc.Failures)
	}
	if got := caseNames(doc, 0); len(got) != 1 || got[0] != "5 other devices" {
		t.Errorf("cases = %v", got)
	}
}
