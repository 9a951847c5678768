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
