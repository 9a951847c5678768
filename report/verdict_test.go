package report

import (
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
)

// TestVerdict: the verdict names the loss, its length, the devices and
// the recovery, and judges the return against the rules that ran: flagged
// by a finding inside the incident, passed when they ran and found none,
// not judged when none ran.
func TestVerdict(t *testing.T) {
	at := func(s float64) int64 {
		return time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC).Add(time.Duration(s * 1e9)).UnixNano()
	}
	inc := analyze.Incident{LostAt: at(0), FirstConnectAt: at(15.5), DevicesLost: 200, Recovered: 199, RecoveredBeforeNext: 199,
		TTR50: 20 * time.Second, TTR90: 41234567 * time.Microsecond, ConnectsPeak: 180, ConnectsPeakAt: at(16)}
	next := inc
	next.LostAt, next.FirstConnectAt, next.ConnectsPeakAt = at(100), at(110), at(111)
	res := func(findings ...analyze.Finding) *analyze.Result {
		return &analyze.Result{
			Summary:  analyze.Summary{Fleet: &analyze.FleetStats{Incidents: []analyze.Incident{inc, next}}},
			Rules:    []analyze.RuleInfo{{ID: "recovery-storm"}, {ID: "resync"}, {ID: "connect-budget"}},
			Findings: findings,
		}
	}
	storm := analyze.Finding{Rule: "resync", Start: at(15), End: at(17)}
	r := res(storm)
	r.Summary.Skipped = []analyze.Skip{{Rule: "connect-budget"}}
	v := Verdict(r)
	if len(v) != 2 {
		t.Fatalf("%d lines, want one per incident: %q", len(v), v)
	}
	for _, want := range []string{"incident 1: 200 devices lost the broker at 2026-11-30T14:17:30Z for 15.5s",
		"199 of 200 recovered, time to recover (from each device's own loss) p50 20s, p90 41.235s",
		"a storm on its return: recorded connects peaked at 180 in 1s, with retry timers in lockstep (resync); within what the policy's jitter allows (recovery-storm)"} {
		if !strings.Contains(v[0], want) {
			t.Errorf("verdict %q lacks %q", v[0], want)
		}
	}
	if !strings.Contains(v[1], "no storm on its return: recorded connects peaked at 180 in 1s, within what the policy's jitter allows (recovery-storm), with retry timers not in lockstep (resync)") ||
		strings.Contains(v[1], "connect budget") {
		t.Errorf("the second incident, which no finding falls in: %q", v[1])
	}
	// recoveries after the next incident began are not this one's
	inc.RecoveredBeforeNext = 159
	if v := Verdict(res()); !strings.Contains(v[0], "159 of 200 recovered before the next incident") {
		t.Errorf("recoveries across the next incident: %q", v[0])
	}
	inc.RecoveredBeforeNext = 199
	// a peak long after the return says when it came
	inc.ConnectsPeakAt = at(38)
	if v := Verdict(res()); !strings.Contains(v[0], "peaked at 180 in 1s, 23s after the first came back") {
		t.Errorf("a late peak: %q", v[0])
	}
	inc.ConnectsPeakAt = at(16)
	// a silent outage is an estimate, and says so
	inc.Silent, inc.LostAtEarliest, inc.LostAtLatest = true, at(-3), at(1)
	if v := Verdict(res()); !strings.Contains(v[0], "200 devices lost the link silently, at about 2026-11-30T14:17:30Z (estimated between 2026-11-30T14:17:27Z and 2026-11-30T14:17:31Z)") {
		t.Errorf("a silent outage: %q", v[0])
	}
	inc.Silent = false
	r = res()
	r.Rules = nil
	if v := Verdict(r); !strings.Contains(v[0], "storm on its return not judged") {
		t.Errorf("no rule ran: %q", v[0])
	}
}

// TestVerdictNoOutage: a log without an incident says so.
func TestVerdictNoOutage(t *testing.T) {
	for _, r := range []*analyze.Result{{}, {Summary: analyze.Summary{Fleet: &analyze.FleetStats{}}}} {
		if v := Verdict(r); len(v) != 1 || !strings.HasPrefix(v[0], "no outage") {
			t.Errorf("Verdict = %q", v)
		}
	}
}

// TestVerdictWeighsTheReturn: the verdict prints recoveries beside what
// the policy's draws expect, says when the policy was inferred, gives
// every recorded connect only where it differs, and says why a return
// whose recoveries outnumber the expectation was still within the policy
// (issue 36: "a storm on its return ... within what the policy's jitter
// allows" with no expected peak printed).
func TestVerdictWeighsTheReturn(t *testing.T) {
	at := func(s float64) int64 {
		return time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC).Add(time.Duration(s * 1e9)).UnixNano()
	}
	inc := analyze.Incident{LostAt: at(0), FirstConnectAt: at(15), DevicesLost: 48, Recovered: 48, RecoveredBeforeNext: 48,
		ConnectsPeak: 12, ConnectsPeakAt: at(16), Storm: &analyze.StormWeighed{Recoveries: 10, At: at(16), Expected: 3.7, ExpectedAt: at(20)}}
	res := &analyze.Result{Summary: analyze.Summary{Fleet: &analyze.FleetStats{Incidents: []analyze.Incident{inc}},
		Policy: analyze.PolicyInfo{Source: "declared"}}, Rules: []analyze.RuleInfo{{ID: "recovery-storm"}}}
	v := Verdict(res)[0]
	for _, want := range []string{"recoveries peaked at 10 in 1s (the declared policy's draws: at most 3.7; every recorded connect, reconnects included: 12)",
		"within what the policy's jitter allows (recovery-storm): 10 is not over 3× the 3.7 expected"} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict %q lacks %q", v, want)
		}
	}
	res.Summary.Policy.Source = "inferred"
	res.Summary.Fleet.Incidents[0].Storm.Inferred = true
	res.Summary.Fleet.Incidents[0].Storm.Recoveries, res.Summary.Fleet.Incidents[0].ConnectsPeak = 8, 8
	v = Verdict(res)[0]
	for _, want := range []string{"recoveries peaked at 8 in 1s (the inferred policy's draws: at most 3.7)",
		"within what the inferred policy's jitter allows (recovery-storm): 8 is fewer than the 10 recoveries in 1s a storm needs"} {
		if !strings.Contains(v, want) {
			t.Errorf("verdict %q lacks %q", v, want)
		}
	}
}
