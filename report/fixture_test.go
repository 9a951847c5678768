package report

import (
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
)

// t0 is 2026-11-30T14:17:30Z in Unix ns.
var t0 = time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC).UnixNano()

// fixture returns a result as analyze.Check makes it: three rules, five
// findings worst first, among them one about the fleet without records
// and one on stdin.
func fixture() *analyze.Result {
	pol, err := policy.Preset("full-jitter")
	if err != nil {
		panic(err)
	}
	r := &analyze.Result{
		Dataset: "ds",
		Files:   []string{"ds/part-00000.parquet"},
		Sources: []string{"logs/gw-a.ndjson", "-", "odd,name:x.ndjson"},
		Rules: []analyze.RuleInfo{
			{ID: "resync", Severity: analyze.Error, Title: "retry timers move in phase", Help: "Timers that are not independently randomised."},
			{ID: "delay-bounds", Severity: analyze.Error, Title: "a delay outside the policy's bounds", Help: "A drawn delay outside [0, ceiling]."},
			{ID: "hot-loop", Severity: analyze.Warning, Title: "a tight retry loop", Help: "Zero delays."},
		},
		Findings: []analyze.Finding{
			{Rule: "delay-bounds", Kind: "delay-bounds/delay-outside-bounds", Severity: analyze.Error, Device: "dev-0002", Start: t0 + 5e9, End: t0 + 5e9,
				Message: "dev-0002 drew 41.2 s at attempt 3", Explanation: "the ceiling at attempt 3 is min(120, 1*2^3) = 8 s",
				Records: []analyze.Ref{{File: 0, Row: 7, Source: 0, Line: 12}, {File: 0, Row: 8, Source: 0, Line: 14}}},
			{Rule: "delay-bounds", Kind: "delay-bounds/delay-outside-bounds", Severity: analyze.Error, Device: "dev-0003", Start: t0, End: t0 + 1_500_000_000,
				Message: "dev-0003 drew -1 s", Explanation: "a delay is at least 0",
				Records: []analyze.Ref{{File: 0, Row: 11, Source: 2, Line: 3}}},
			{Rule: "resync", Kind: "resync/lockstep", Severity: analyze.Error, Device: analyze.Fleet, Start: t0, End: t0 + 60e9,
				Message: "40 devices drew the same delays", Explanation: "100% of attempts at 5 s"},
			{Rule: "hot-loop", Kind: "hot-loop/tight-loop", Severity: analyze.Warning, Device: "dev-0001", Start: t0, End: t0 + 2e9,
				Message: "dev-0001 retried 12 times in 2 s", Explanation: "12 delays of 0 s",
				Records: []analyze.Ref{{File: 0, Row: 1, Source: 1, Line: 2}}},
			{Rule: "hot-loop", Kind: "hot-loop/tight-loop", Severity: analyze.Info, Device: "dev-0002", Start: t0, End: t0,
				Message: "dev-0002 retried twice at once", Explanation: "2 delays of 0 s",
				Records: []analyze.Ref{{File: 0, Row: 9, Source: 0, Line: 20}}},
		},
	}
	r.Summary = analyze.Summary{Devices: 5, Records: 40, Rejected: 1,
		ByRule:     map[string]int{"delay-bounds": 2, "resync": 1, "hot-loop": 2},
		BySeverity: map[string]int{"error": 3, "warning": 1, "info": 1},
		Policy:     analyze.PolicyInfo{Source: "declared", Name: "full-jitter", Policy: &pol},
		Fleet: &analyze.FleetStats{Devices: 5, Records: 40, Attempts: 20, Window: time.Second, Peak: 5, PeakAt: t0 + 5e9,
			Lost: 5, Recovered: 4, TTR: analyze.DurationsOf(time.Second, 2*time.Second, 3*time.Second, 4*time.Second),
			TTR50: 2 * time.Second, TTR90: 4 * time.Second, TTR99: 4 * time.Second, TTRMax: 4 * time.Second, Fairness: 0.83,
			ClockOffsets: []analyze.ClockOffset{{Device: "dev-0005", Offset: 4 * time.Second, Resolution: 20 * time.Millisecond, LostAt: t0, Basis: analyze.BasisAudit,
				From: analyze.NoTime, Until: analyze.NoTime}},
			Incidents: []analyze.Incident{{LostAt: t0, LostAtEarliest: t0, LostAtLatest: t0, FirstLoss: t0, Basis: analyze.BasisFirstLoss,
				LastLoss: t0 + 2e6, DevicesLost: 5, LossInferred: true, RecoveredBeforeNext: 4, Corrected: 1,
				FirstConnectAt: t0 + 1e9, Recovered: 4, TTR50: 2 * time.Second, TTR90: 4 * time.Second, TTR99: 4 * time.Second,
				TTRMax: 4 * time.Second, ConnectsPeak: 3, ConnectsPeakAt: t0 + 2e9,
				Met: []analyze.Met{
					{Stage: auditfmt.StageSession, Outcome: auditfmt.BackoffWait, Reason: -1, Records: 12, Devices: 5},
					{Stage: auditfmt.StageSession, Outcome: auditfmt.Connected, Reason: -1, Records: 4, Devices: 4},
					{Stage: auditfmt.StageSession, Outcome: auditfmt.AttemptFailed, Class: auditfmt.FailTransient, Reason: -1, Records: 7, Devices: 5}},
				Stages: []analyze.StageOutcome{
					{Stage: auditfmt.StageSession, Outcome: auditfmt.BackoffWait, Records: 12, Devices: 5},
					{Stage: auditfmt.StageSession, Outcome: auditfmt.Connected, Records: 4, Devices: 4},
					{Stage: auditfmt.StageSession, Outcome: auditfmt.AttemptFailed, Records: 7, Devices: 5}},
				Diagnosis: analyze.DiagNoAnswer,
				Unrecovered: []analyze.Unrecovered{{Device: "dev-0004", State: analyze.StateWaiting, At: t0 + 3e9, Stage: auditfmt.StageSession,
					Due: t0 + 63e9, Delay: 60, Reason: -1, Attempts: 3, CutShort: true}},
				ServiceDevices: 4, Served: 4, TTS50: 9 * time.Second, TTS90: 12 * time.Second, TTS99: 12 * time.Second, TTSMax: 12 * time.Second,
				Unserved: []analyze.Unserved{{Device: "dev-0001", Reconnected: t0 + 2e9, Served: t0 + 12e9}}}}},
		Notes: []string{"spacing: min_connect_spacing_s is not declared"},
	}
	return r
}

// empty returns a result without findings.
func empty() *analyze.Result {
	r := fixture()
	r.Findings = nil
	r.Summary.ByRule = map[string]int{}
	r.Summary.BySeverity = map[string]int{}
	r.Summary.Notes = nil
	r.Summary.Policy = analyze.PolicyInfo{Source: "none"}
	return r
}
