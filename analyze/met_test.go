package analyze

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/simulate"
)

// metLog writes n devices that connect at 0 s and then write what step
// writes; rec takes the outcome, time, attempt, delay and extra members.
func metLog(n int, step func(i int, rec func(outcome string, at float64, attempt int, delay float64, extra string))) string {
	var b strings.Builder
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("dev-%03d", i+1)
		rec := func(outcome string, at float64, attempt int, delay float64, extra string) {
			fmt.Fprintf(&b, `{"client_id":%q,"attempt":%d,"backoff_delay_s":%g,"outcome":%q,"clean_session":false,"recorded_at":%q%s}`+"\n",
				id, attempt, delay, outcome, t0.Add(time.Duration((at+float64(i)*0.001)*1e9)).Format(time.RFC3339Nano), extra)
		}
		rec("backoff_wait", 0, 0, 0.1, "")
		rec("connected", 0.15, 0, 0, "")
		step(i, rec)
	}
	return b.String()
}

// TestRefusingBrokerIsNoDeadBroker: a broker that answered every CONNECT
// for 30 s with CONNACK 3 (server unavailable) is diagnosed as refusing,
// with the refusals counted by reason from the devices' own records; the
// devices that never came back are named with their last states.
func TestRefusingBrokerIsNoDeadBroker(t *testing.T) {
	const refused = `,"reason_code":3,"failure_class":"overload"`
	log := metLog(200, func(i int, rec func(string, float64, int, float64, string)) {
		rec("disconnected", 10, 0, 0, "")
		at, k := 10.0, 0
		for at < 40 {
			d := 1.0 + float64(i%10)*0.5
			rec("backoff_wait", at, k, d, "")
			at += d
			k++
			rec("refused", at, k, 0, refused)
		}
		switch i {
		case 0: // waits out a backoff due after the log's end
			rec("backoff_wait", at, k, 600, "")
		case 1:
			rec("gave_up", at, k, 0, "")
		case 2: // its last refusal, then nothing
		default:
			rec("backoff_wait", at, k, 0.5, "")
			rec("connected", at+0.6, 0, 0, "")
		}
	})
	res := checkLog(t, log, nil)
	incs := res.Summary.Fleet.Incidents
	if len(incs) != 1 || incs[0].DevicesLost != 200 {
		t.Fatalf("incidents %+v, want one of 200 devices", incs)
	}
	in := &incs[0]
	if in.Diagnosis != DiagRefused {
		t.Errorf("diagnosis %q, want %q", in.Diagnosis, DiagRefused)
	}
	var got *Met
	for i := range in.Met {
		if m := &in.Met[i]; m.Outcome == auditfmt.Refused {
			if got != nil {
				t.Fatalf("two kinds of refusal: %+v", in.Met)
			}
			got = m
		}
	}
	want := 0
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"refused"`) {
			want++
		}
	}
	if got == nil || got.Records != want || got.Devices != 200 || got.Reason != 3 || got.Class != auditfmt.FailOverload ||
		got.Stage != auditfmt.StageSession {
		t.Errorf("refusals %+v, want %d records of CONNACK 3 (overload) from 200 devices", got, want)
	}
	states := map[string]string{}
	for _, u := range in.Unrecovered {
		states[u.Device] = fmt.Sprintf("%s %v", u.State, u.CutShort)
	}
	wantStates := map[string]string{"dev-001": "waiting true", "dev-002": "gave-up false", "dev-003": "refused false"}
	if fmt.Sprint(states) != fmt.Sprint(wantStates) {
		t.Errorf("unrecovered %v, want %v", states, wantStates)
	}
	if u := in.Unrecovered[0]; u.Delay != 600 || u.Due-u.At != int64(600*time.Second) {
		t.Errorf("the waiting device: %+v, want a backoff of 600 s due 600 s after its last record", u)
	}
}

// TestDiagnoseStages: the first of the link and address stages that
// failed on a tenth of the devices is the diagnosis (every stage comes
// up again at the recovery); else what the session met.
func TestDiagnoseStages(t *testing.T) {
	so := func(st auditfmt.Stage, o auditfmt.Outcome, n int) StageOutcome {
		return StageOutcome{Stage: st, Outcome: o, Records: n, Devices: n}
	}
	const link, addr, sess = auditfmt.StageLink, auditfmt.StageAddress, auditfmt.StageSession
	for _, tc := range []struct {
		stages []StageOutcome
		want   string
	}{
		{nil, DiagNothingFailed},
		{[]StageOutcome{so(sess, auditfmt.BackoffWait, 5), so(sess, auditfmt.Connected, 5)}, DiagNothingFailed},
		{[]StageOutcome{so(sess, auditfmt.AttemptFailed, 50)}, DiagNoAnswer},
		{[]StageOutcome{so(sess, auditfmt.AttemptFailed, 50), so(sess, auditfmt.Refused, 10)}, DiagNoAnswer},
		{[]StageOutcome{so(sess, auditfmt.AttemptFailed, 10), so(sess, auditfmt.Refused, 50)}, DiagRefused},
		{[]StageOutcome{so(link, auditfmt.AttemptFailed, 20), so(link, auditfmt.Connected, 50), so(sess, auditfmt.AttemptFailed, 50)}, DiagLink},
		{[]StageOutcome{so(link, auditfmt.Connected, 50), so(addr, auditfmt.AttemptFailed, 30), so(addr, auditfmt.Connected, 50)}, DiagAddress},
		// one device's flaky link among 50 does not make a dead link
		{[]StageOutcome{so(link, auditfmt.AttemptFailed, 1), so(link, auditfmt.Connected, 50), so(sess, auditfmt.Refused, 3)}, DiagRefused},
	} {
		if got := Diagnose(&Incident{DevicesLost: 50, Stages: tc.stages}); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.stages, got, tc.want)
		}
	}
}

// TestDiagnoseFailedAddressStage: a fleet whose address service (DHCP)
// failed for 30 s, as simulate models it, is diagnosed by the stage that
// failed, not as a dead broker.
func TestDiagnoseFailedAddressStage(t *testing.T) {
	pol := simPreset(t, "full-jitter")
	ds, _ := simDataset(t, simulate.Config{Devices: 100, Outage: 30 * time.Second, Policy: pol, AddressDown: true, Seed: 6})
	res, err := Check(ds, Options{Policy: &pol})
	if err != nil {
		t.Fatal(err)
	}
	incs := res.Summary.Fleet.Incidents
	if len(incs) != 1 || incs[0].Diagnosis != DiagAddress || incs[0].FailedDevices(auditfmt.StageAddress) != 100 ||
		incs[0].StageRecords(auditfmt.StageSession, auditfmt.AttemptFailed) != 0 {
		t.Fatalf("incidents %+v, want one diagnosed address-failed, with the address attempts of all 100 devices failed", incs)
	}
}
