package analyze

import (
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// TestBuildPerStage: a device that records its link attempts beside its
// MQTT ones gets a timeline per stage; the link coming back does not end
// the session's outage, and a link failure is not the outcome of a
// session attempt.
func TestBuildPerStage(t *testing.T) {
	log := `{"client_id": "cam-1", "attempt": 0, "backoff_delay_s": 0.0, "outcome": "disconnected", "clean_session": false, "recorded_at": "2026-11-30T14:00:00+00:00"}
{"client_id": "cam-1", "attempt": 0, "backoff_delay_s": 0.0, "outcome": "disconnected", "clean_session": false, "recorded_at": "2026-11-30T14:00:00+00:00", "stage": "link"}
{"client_id": "cam-1", "attempt": 0, "backoff_delay_s": 2.0, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:00:00+00:00", "stage": "link"}
{"client_id": "cam-1", "attempt": 0, "backoff_delay_s": 0.5, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:00:00.1+00:00"}
{"client_id": "cam-1", "attempt": 1, "backoff_delay_s": 2.0, "outcome": "attempt_failed", "clean_session": false, "recorded_at": "2026-11-30T14:00:02+00:00", "stage": "link", "failure_class": "transient"}
{"client_id": "cam-1", "attempt": 1, "backoff_delay_s": 1.0, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:00:02+00:00", "stage": "link"}
{"client_id": "cam-1", "attempt": 0, "backoff_delay_s": 1.0, "outcome": "connected", "clean_session": false, "recorded_at": "2026-11-30T14:00:03+00:00", "stage": "link"}
{"client_id": "cam-1", "attempt": 1, "backoff_delay_s": 0.5, "outcome": "attempt_failed", "clean_session": false, "recorded_at": "2026-11-30T14:00:03.2+00:00"}
{"client_id": "cam-1", "attempt": 1, "backoff_delay_s": 1.2, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:00:03.2+00:00"}
{"client_id": "cam-1", "attempt": 0, "backoff_delay_s": 1.2, "outcome": "connected", "clean_session": false, "recorded_at": "2026-11-30T14:00:04.5+00:00"}
`
	res := checkLog(t, log, nil)
	d, _, err := Timeline(res.Dataset, "cam-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Episodes) != 1 || d.Episodes[0].End != d.Events[9].At || d.Episodes[0].Attempts != 2 {
		t.Fatalf("session episodes %+v, want one of 2 attempts ending at the session's connected", d.Episodes)
	}
	if len(d.Stages) != 1 || d.Stages[0].Stage != auditfmt.StageLink || len(d.Stages[0].Episodes) != 1 || d.Stages[0].Episodes[0].Attempts != 2 {
		t.Fatalf("stages %+v, want the link's own episode of 2 attempts", d.Stages)
	}
	var session []Attempt
	for _, a := range d.Attempts {
		if a.Stage == 0 {
			session = append(session, a)
		}
	}
	if len(session) != 2 || d.Events[session[0].Outcome].Outcome != auditfmt.AttemptFailed || d.Events[session[0].Outcome].Stage != 0 {
		t.Fatalf("session attempts %+v: the first one's outcome must be the session's attempt_failed", session)
	}
}
