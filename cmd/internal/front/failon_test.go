package front

import (
	"testing"

	"github.com/stormaudit/stormaudit/analyze"
)

func TestExitStatus(t *testing.T) {
	res := &analyze.Result{Findings: []analyze.Finding{{Severity: analyze.Warning}, {Severity: analyze.Info}, {Severity: analyze.Info}}}
	for _, tt := range []struct {
		failOn        string
		code, failing int
	}{{"none", 0, 0}, {"error", 0, 0}, {"", 0, 0}, {"warning", 1, 1}, {"Warning", 1, 1}, {"INFO", 1, 3}, {"info", 1, 3}} {
		sev, err := ParseFailOn(tt.failOn)
		if err != nil {
			t.Fatal(err)
		}
		if code, failing := ExitStatus(res, sev); code != tt.code || failing != tt.failing {
			t.Errorf("--fail-on %q: exit %d with %d failing, want %d with %d", tt.failOn, code, failing, tt.code, tt.failing)
		}
	}
	if _, err := ParseFailOn("Fatal"); err == nil || err.Error() != `check: --fail-on: expected none, info, warning or error, found "fatal"` {
		t.Errorf("--fail-on Fatal: %v", err)
	}
}

func TestFailing(t *testing.T) {
	for _, tt := range []struct {
		failing int
		failOn  analyze.Severity
		want    string
	}{
		{1, analyze.Warning, "check: 1 finding at or above --fail-on warning"},
		{6, analyze.Error, "check: 6 findings at or above --fail-on error"},
	} {
		if got := Failing(tt.failing, tt.failOn).Error(); got != tt.want {
			t.Errorf("Failing(%d, %v) = %q, want %q", tt.failing, tt.failOn, got, tt.want)
		}
	}
}
