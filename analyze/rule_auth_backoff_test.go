package analyze

import (
	"strings"
	"testing"
)

// authLog writes a device that fails once on the network and is then
// refused with the given members, retrying after each refusal (at
// attempts 2, 3, ...) after the given delays.
func authLog(w *strings.Builder, dev string, refusal string, delays ...float64) {
	l := newDevLog(w, dev, 0.003).drop().wait(0.35).fail("attempt_failed", `"failure_class": "transient"`).wait(0.8)
	for _, d := range delays {
		l.fail("refused", refusal).wait(d)
	}
}

func TestAuthBackoffTests(t *testing.T) {
	tests := []struct {
		name    string
		toml    string
		refusal string
		delays  []float64 // after the refusals at attempts 2, 3 and 4: network ceilings 4, 8 and 16 s
		want    string    // a part of the explanation, "" for no finding
	}{
		{"minimum kept", fullJitterTOML + "auth_min_delay_s = 300\n", `"reason_code": 135`, []float64{300, 300, 300}, ""},
		{"minimum broken", fullJitterTOML + "auth_min_delay_s = 300\n", `"reason_code": 135`, []float64{300, 2.5, 300},
			"the policy declares auth_min_delay_s = 300 s, and the test is delay >= auth_min_delay_s"},
		{"minimum within 1 µs", fullJitterTOML + "auth_min_delay_s = 300\n", `"reason_code": 135`, []float64{299.999999}, ""},
		{"no minimum, network schedule", fullJitterTOML, `"failure_class": "auth"`, []float64{3.2, 7.9, 16},
			"auth_min_delay_s is not declared, so the test is whether it backed off harder than the network schedule, " +
				"whose ceiling at attempt 2 is min(120, 1*2^2) = 4 s: 3.2 s is not above it"},
		{"no minimum, harder", fullJitterTOML, `"failure_class": "auth"`, []float64{60, 60, 60}, ""},
		{"declared 0", fullJitterTOML + "auth_min_delay_s = 0\n", `"failure_class": "auth"`, []float64{4}, "is not above it"},
		{"MQTT 3.1.1 code 5", fullJitterTOML, `"reason_code": 5`, []float64{1.1}, "reason code 5"},
		{"MQTT 5 code 134", fullJitterTOML, `"reason_code": 134`, []float64{1.1}, "reason code 134"},
		{"server busy", fullJitterTOML, `"reason_code": 137, "failure_class": "overload"`, []float64{1.1}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w strings.Builder
			authLog(&w, "dev-0001", tc.refusal, tc.delays...)
			p := *mustPolicy(t, tc.toml)
			got := of(checkLog(t, w.String(), &p), authBackoffID)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("unexpected findings:%s", describe(got))
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0].Explanation, tc.want)):
				t.Errorf("want one finding explaining %q, got:%s", tc.want, describe(got))
			}
		})
	}
}

func TestAuthBackoffNotes(t *testing.T) {
	var w strings.Builder
	for _, dev := range []string{"dev-0001", "dev-0002"} {
		// refused from the first attempt on: no network schedule to infer a policy from
		newDevLog(&w, dev, 0.001).drop().wait(0.35).fail("refused", `"failure_class": "auth"`).wait(1.2).
			fail("refused", `"failure_class": "auth"`).wait(0.9)
	}
	// no policy to compare with: one note, no findings
	res := checkLog(t, w.String(), nil)
	if res.Summary.Policy.Source != "none" {
		t.Fatalf("policy %s, want none", res.Summary.Policy.Source)
	}
	if got := of(res, authBackoffID); len(got) > 0 {
		t.Errorf("findings without a policy:%s", describe(got))
	}
	notes := strings.Join(res.Summary.Notes, "\n")
	if strings.Count(notes, authBackoffID+": ") != 1 || !strings.Contains(notes, authBackoffID+": delay is not declared") {
		t.Errorf("notes: %s", notes)
	}
	// a policy without auth_min_delay_s: the note says which test applies
	p := *mustPolicy(t, fullJitterTOML)
	res = checkLog(t, w.String(), &p)
	if got := of(res, authBackoffID); len(got) != 2 {
		t.Errorf("%d findings, want 2:%s", len(got), describe(got))
	}
	if notes := strings.Join(res.Summary.Notes, "\n"); !strings.Contains(notes, authBackoffID+": auth_min_delay_s is not declared") {
		t.Errorf("notes: %s", notes)
	}
}
