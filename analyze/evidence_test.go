package analyze

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// evidenceLog writes n devices that connect at 0 s, then each do what
// step writes (with the device's number and the time base).
func evidenceLog(n int, step func(b *strings.Builder, id string, rec func(outcome string, at float64, attempt int, delay float64))) string {
	var b strings.Builder
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("dev-%02d", i+1)
		rec := func(outcome string, at float64, attempt int, delay float64) {
			fmt.Fprintf(&b, `{"client_id":%q,"attempt":%d,"backoff_delay_s":%g,"outcome":%q,"clean_session":false,"recorded_at":%q}`+"\n",
				id, attempt, delay, outcome, t0.Add(time.Duration((at+float64(i)*0.01)*1e9)).Format(time.RFC3339Nano))
		}
		rec("backoff_wait", 0, 0, 0.1)
		rec("connected", 0.15, 0, 0)
		step(&b, id, rec)
	}
	return b.String()
}

// TestEvidenceOfALoss holds the evidence rule (docs/rules.md, "Evidence of
// a loss"): new attempts that connect at once with nothing failing are
// churn, not losses, and flagged as reconnects while connected; an
// attempt that does not connect before its device stops minutes later is
// a loss; one the device stops before it could open is not.
func TestEvidenceOfALoss(t *testing.T) {
	for _, tc := range []struct {
		name      string
		step      func(b *strings.Builder, id string, rec func(string, float64, int, float64))
		lost, rwc int
	}{
		{"churn", func(_ *strings.Builder, _ string, rec func(string, float64, int, float64)) {
			for k := range 20 {
				at := 1 + float64(k)
				rec("backoff_wait", at, 0, 0.3)
				rec("connected", at+0.32, 0, 0)
			}
		}, 0, 10},
		{"stopped long after a hung attempt", func(_ *strings.Builder, _ string, rec func(string, float64, int, float64)) {
			rec("backoff_wait", 10, 0, 1)
			rec("stopped", 310, 0, 0)
		}, 10, 0},
		{"stopped before its attempt opened", func(_ *strings.Builder, _ string, rec func(string, float64, int, float64)) {
			rec("backoff_wait", 10, 0, 5)
			rec("stopped", 11, 0, 0)
		}, 0, 10},
	} {
		res := checkLog(t, evidenceLog(10, tc.step), nil)
		st := res.Summary.Fleet
		if st.Lost != tc.lost || len(of(res, reconnectWhileConnectedID)) != tc.rwc {
			t.Errorf("%s: %d lost, %d reconnect-while-connected findings; want %d and %d", tc.name, st.Lost, len(of(res, reconnectWhileConnectedID)), tc.lost, tc.rwc)
		}
		if want := min(tc.lost, 1); len(st.Incidents) != want {
			t.Errorf("%s: %d incidents, want %d", tc.name, len(st.Incidents), want)
		}
	}
}

// TestRecoveryStormCountsAttemptsInFlight: a single-owner full-jitter
// fleet whose link died silently: each device noticed the loss one by
// one, drew its delay and opened its socket while the link was still
// dead, and its connect (its SYN retried) went through when the link came
// back, all in the same second. Those attempts were in flight at the
// return: the policy's draws put them there, so it is no recovery storm.
func TestRecoveryStormCountsAttemptsInFlight(t *testing.T) {
	const back = 90.0 // the link returns
	log := evidenceLog(100, func(_ *strings.Builder, id string, rec func(string, float64, int, float64)) {
		var n int
		fmt.Sscanf(id, "dev-%d", &n)
		detect := 40 + float64(n)*0.2 // noticed over 20 s
		delay := 0.5 + float64(n%7)*0.1
		rec("disconnected", detect, 0, 0)
		rec("backoff_wait", detect+0.01, 0, delay)
		rec("connected", back+float64(n%10)*0.05, 0, 0) // the hung attempt's own outcome
	})
	pol := declaredPreset(t, "full-jitter", "")
	res := checkLog(t, log, pol)
	if fs := of(res, recoveryStormID); len(fs) > 0 {
		t.Errorf("recovery-storm on attempts in flight at the return:%s", describe(fs))
	}
	incs := res.Summary.Fleet.Incidents
	if len(incs) != 1 || !incs[0].Silent || incs[0].DevicesLost != 100 {
		t.Fatalf("incidents %+v, want one silent outage of 100 devices", incs)
	}
}

// TestLossWithFailuresDatedByItsOwnEvidence pins the seed's fixed-timer
// fleet whose broker died: every device noticed at once and failed five
// times on a 5 s timer. Two of them churned once, long after they had
// recovered; that does not move their real loss to its first socket-open
// (5 s late, outside the incident).
func TestLossWithFailuresDatedByItsOwnEvidence(t *testing.T) {
	log := evidenceLog(20, func(_ *strings.Builder, id string, rec func(string, float64, int, float64)) {
		at := 10.0
		for k := range 5 {
			rec("backoff_wait", at, k+1, 5)
			at += 5
			rec("attempt_failed", at, k+2, 0)
		}
		rec("backoff_wait", at, 6, 5)
		rec("connected", at+5.1, 0, 0)
		if id == "dev-03" || id == "dev-11" {
			rec("backoff_wait", 100, 0, 0.1)
			rec("connected", 100.15, 0, 0)
		}
	})
	res := checkLog(t, log, nil)
	incs := res.Summary.Fleet.Incidents
	if len(incs) != 1 || incs[0].DevicesLost != 20 {
		t.Fatalf("incidents %+v, want one of all 20 devices", incs)
	}
	if got := time.Unix(0, incs[0].LostAt).UTC().Format("15:04:05.000"); got != "12:00:10.000" {
		t.Errorf("lost at %s, want 12:00:10.000 (the first backoff_wait)", got)
	}
}
