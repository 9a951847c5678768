package front

import (
	"fmt"
	"strings"

	"github.com/stormaudit/stormaudit/analyze"
)

// FailNone is the --fail-on threshold that no finding reaches.
const FailNone = analyze.Error + 1

// ParseFailOn reads --fail-on, in any case (Warning, as a CI variable is
// often written): none is FailNone, and "" (an empty STORMAUDIT_FAIL_ON,
// or --fail-on "") the default, error.
func ParseFailOn(s string) (analyze.Severity, error) {
	s = strings.ToLower(s)
	switch s {
	case "none":
		return FailNone, nil
	case "":
		return analyze.Error, nil
	}
	sev, ok := analyze.ParseSeverity(s)
	if !ok {
		return 0, fmt.Errorf("check: --fail-on: expected none, info, warning or error, found %q", s)
	}
	return sev, nil
}

// ExitStatus returns 1 and the number of findings at or above failOn,
// or 0 if there are none.
func ExitStatus(res *analyze.Result, failOn analyze.Severity) (code, failing int) {
	for _, f := range res.Findings {
		if f.Severity >= failOn {
			failing++
		}
	}
	if failing > 0 {
		return 1, failing
	}
	return 0, 0
}

// Failing is the error of a check that exits 1: failing findings at or
// above failOn.
func Failing(failing int, failOn analyze.Severity) error {
	noun := "findings"
	if failing == 1 {
		noun = "finding"
	}
	return fmt.Errorf("check: %d %s at or above --fail-on %s", failing, noun, failOn)
}
