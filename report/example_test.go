package report_test

import (
	"os"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/report"
)

func ExampleGitHub() {
	at := time.Date(2026, 11, 30, 14, 17, 35, 0, time.UTC).UnixNano()
	res := &analyze.Result{
		Sources: []string{"logs/gw-a.ndjson"},
		Rules:   []analyze.RuleInfo{{ID: "delay-bounds", Severity: analyze.Error, Title: "a delay outside the policy's bounds"}},
		Findings: []analyze.Finding{{
			Rule: "delay-bounds", Severity: analyze.Error, Device: "dev-0002", Start: at, End: at,
			Message:     "dev-0002 drew 41.2 s at attempt 3",
			Explanation: "the ceiling at attempt 3 is min(120, 1*2^3) = 8 s",
			Records:     []analyze.Ref{{Source: 0, Line: 12}},
		}},
	}
	report.GitHub(os.Stdout, res, 0)
	// Output:
	// ::error file=logs/gw-a.ndjson,line=12,title=stormaudit delay-bounds%3A dev-0002::dev-0002 drew 41.2 s at attempt 3%0Athe ceiling at attempt 3 is min(120, 1*2^3) = 8 s%0Arecords: logs/gw-a.ndjson:12
}

func ExampleTime() {
	fmt := report.Time(time.Date(2026, 11, 30, 14, 17, 35, 50_000_000, time.FixedZone("CET", 3600)).UnixNano())
	os.Stdout.WriteString(fmt + "\n")
	// Output:
	// 2026-11-30T13:17:35.05Z
}
