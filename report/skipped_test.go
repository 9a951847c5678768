package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/analyze"
)

// withSkipped adds to the fixture a rule that could not run.
func withSkipped(r *analyze.Result) *analyze.Result {
	r.Rules = append(r.Rules, analyze.RuleInfo{ID: "spacing", Severity: analyze.Warning, Title: "socket-opens too close together"})
	r.Summary.Skipped = []analyze.Skip{{Rule: "spacing", Reason: "min_connect_spacing_s is not declared"}}
	return r
}

// TestSkippedRule: a rule that could not run is skipped in every format,
// never listed among the rules that found nothing.
func TestSkippedRule(t *testing.T) {
	var text bytes.Buffer
	if err := Text(&text, withSkipped(fixture()), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := text.String(); !strings.Contains(out, "\n  skipped:     spacing\n") || strings.Contains(out, "no findings: spacing") {
		t.Errorf("text:\n%s", out)
	}
	text.Reset()
	if err := Text(&text, withSkipped(empty()), TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if out := text.String(); !strings.Contains(out, "findings: none (3 rules ran, 1 skipped)\n  skipped:     spacing\n") {
		t.Errorf("text without findings:\n%s", out)
	}

	var js bytes.Buffer
	if err := JSON(&js, withSkipped(fixture())); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Summary struct {
			Skipped []struct{ Rule, Reason string }
		}
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc.Summary.Skipped; len(s) != 1 || s[0].Rule != "spacing" || s[0].Reason != "min_connect_spacing_s is not declared" {
		t.Errorf("json summary.skipped = %+v", s)
	}

	var ju bytes.Buffer
	if err := JUnit(&ju, withSkipped(fixture()), JUnitOptions{}); err != nil {
		t.Fatal(err)
	}
	var junit struct {
		Skipped int `xml:"skipped,attr"`
		Suites  []struct {
			Name    string `xml:"name,attr"`
			Skipped int    `xml:"skipped,attr"`
			Cases   []struct {
				Name    string `xml:"name,attr"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(ju.Bytes(), &junit); err != nil {
		t.Fatal(err)
	}
	last := junit.Suites[len(junit.Suites)-1]
	if last.Name != "spacing" || last.Skipped != len(last.Cases) || junit.Skipped != last.Skipped || len(last.Cases) == 0 ||
		last.Cases[0].Skipped == nil || last.Cases[0].Skipped.Message != "min_connect_spacing_s is not declared" {
		t.Errorf("junit: %d skipped; spacing suite %+v", junit.Skipped, last)
	}
	for _, s := range junit.Suites[:len(junit.Suites)-1] {
		if s.Skipped != 0 {
			t.Errorf("junit: suite %s has %d skipped testcases; it ran", s.Name, s.Skipped)
		}
	}
}
