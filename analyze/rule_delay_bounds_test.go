package analyze

import (
	"strings"
	"testing"
)

// fullJitterTOML is the reference policy of the rule tests: full jitter
// from 1 s doubling to 120 s.
const fullJitterTOML = "name = \"reference fleet\"\ndelay = \"full_jitter\"\nbase_delay_s = 1\nmultiplier = 2\nmax_delay_s = 120\n"

// retryLog writes a device that drew delays at attempts 0, 1, ... after
// a drop, each failing, and connected after the last; extra members go
// on every backoff_wait.
func retryLog(w *strings.Builder, dev string, delays []float64, extra ...string) {
	l := newDevLog(w, dev, 0.004).drop()
	for i, d := range delays {
		l.wait(d, extra...)
		if i < len(delays)-1 {
			l.fail("attempt_failed", `"failure_class": "transient"`)
		}
	}
	l.connect()
}

func TestDelayBoundsTolerance(t *testing.T) {
	tests := []struct {
		name   string
		delays []float64 // attempts 0 to 3: ceilings 1, 2, 4 and 8 s
		policy string
		want   bool
	}{
		{"at the ceiling", []float64{1, 2, 4, 8}, fullJitterTOML, false},
		{"1 µs above, written to µs", []float64{0.412345, 1.2, 3.1, 8.000001}, fullJitterTOML, false},
		{"2 µs above, written to µs", []float64{0.412345, 1.2, 3.1, 8.000002}, fullJitterTOML, true},
		{"1 ms above, written to ms", []float64{0.412, 1.2, 3.1, 8.001}, fullJitterTOML, false},
		{"2 ms above, written to ms", []float64{0.412, 1.2, 3.1, 8.002}, fullJitterTOML, true},
		{"above the cap", []float64{0.5, 1, 2, 120.5}, fullJitterTOML, true},
		{"equal_jitter at its floor", []float64{0.5, 1, 2, 4}, "delay = \"equal_jitter\"\nbase_delay_s = 1\nmultiplier = 2\nmax_delay_s = 120\n", false},
		{"equal_jitter under its floor", []float64{0.5, 1, 2, 3.9}, "delay = \"equal_jitter\"\nbase_delay_s = 1\nmultiplier = 2\nmax_delay_s = 120\n", true},
		// decorrelated: [1, min(90, 3*prev)]: 2.9 <= 3*1, 8.7 <= 3*2.9, 26.2 > 3*8.7
		{"decorrelated within 3*prev", []float64{1, 2.9, 8.7, 26.1}, "delay = \"decorrelated_jitter\"\nbase_delay_s = 1\nmax_delay_s = 90\n", false},
		{"decorrelated beyond 3*prev", []float64{1, 2.9, 8.7, 26.2}, "delay = \"decorrelated_jitter\"\nbase_delay_s = 1\nmax_delay_s = 90\n", true},
		{"immediate first retry", []float64{0, 1, 2, 4}, "delay = \"exponential\"\nbase_delay_s = 1\nmultiplier = 2\nmax_delay_s = 600\nimmediate_first_retry = true\n", false},
		{"exponential off by one", []float64{1, 2, 4, 8}, "delay = \"exponential\"\nbase_delay_s = 1\nmultiplier = 2\nmax_delay_s = 600\nimmediate_first_retry = true\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w strings.Builder
			retryLog(&w, "dev-0001", tc.delays)
			p := *mustPolicy(t, tc.policy)
			got := of(checkLog(t, w.String(), &p), delayBoundsID)
			if (len(got) > 0) != tc.want {
				t.Errorf("findings: %v, want %v:%s", len(got) > 0, tc.want, describe(got))
			}
		})
	}
}

func TestDelayBoundsAggregates(t *testing.T) {
	var w strings.Builder
	delays := []float64{0.5}
	for a := 1; a <= 14; a++ {
		delays = append(delays, float64(min(120, 1<<a))+float64(a)) // 14 above: 1 s more at attempt 1 ... 14 s more at 14
	}
	retryLog(&w, "dev-0001", delays)
	retryLog(&w, "dev-0002", []float64{0.2, 1.9, 3.3})
	p := *mustPolicy(t, fullJitterTOML)
	got := of(checkLog(t, w.String(), &p), delayBoundsID)
	if len(got) != 1 {
		t.Fatalf("got %d findings, want 1 for dev-0001:%s", len(got), describe(got))
	}
	f := got[0]
	if f.Device != "dev-0001" || !strings.HasPrefix(f.Message, "14 of 15 delays outside the policy's bounds (14 above, 0 below); the worst 134 s at attempt 14") {
		t.Errorf("message %q", f.Message)
	}
	if len(f.Records) != MaxRefs {
		t.Errorf("%d records, want %d", len(f.Records), MaxRefs)
	}
	if f.Start >= f.End {
		t.Errorf("span %d..%d", f.Start, f.End)
	}
	for _, s := range []string{"dev-0001 drew 134 s at attempt 14", "min(120, 1*2^14) = 120 s", "[0, 120] s", `declared policy "reference fleet"`} {
		if !strings.Contains(f.Explanation, s) {
			t.Errorf("explanation lacks %q: %s", s, f.Explanation)
		}
	}
}

func TestDelayBoundsCeiling(t *testing.T) {
	p := *mustPolicy(t, fullJitterTOML)
	var w strings.Builder
	retryLog(&w, "dev-0001", []float64{0.5, 1.5, 3.5}, `"ceiling_s": 1.0`) // right at attempt 0 only
	newDevLog(&w, "dev-0002", 0.01).drop().wait(0.5, `"ceiling_s": 1.0`).fail("attempt_failed").
		wait(1.5, `"ceiling_s": 2.0000005`).connect() // within 1 µs
	got := of(checkLog(t, w.String(), &p), delayBoundsID)
	if len(got) != 1 || got[0].Device != "dev-0001" {
		t.Fatalf("want one finding for dev-0001:%s", describe(got))
	}
	if want := "ceiling_s disagrees with the policy on 2 of 3 records; the worst 1 s at attempt 2, where the policy's ceiling is 4 s"; got[0].Message != want {
		t.Errorf("message %q, want %q", got[0].Message, want)
	}
}

func TestDelayBoundsAuthSchedule(t *testing.T) {
	var w strings.Builder
	newDevLog(&w, "dev-0001", 0.002).drop().wait(0.7).fail("refused", `"reason_code": 135`).
		wait(300).fail("refused", `"failure_class": "auth"`).wait(300)
	retryLog(&w, "dev-0002", []float64{0.2, 1.9, 3.3})
	for _, tc := range []struct {
		toml string
		want int
	}{
		{fullJitterTOML + "auth_min_delay_s = 300\n", 0}, // on the authentication schedule
		{fullJitterTOML, 1}, // on the network schedule: 300 s is above 2 and 4 s
		{fullJitterTOML + "auth_min_delay_s = 0\n", 1},
	} {
		p := *mustPolicy(t, tc.toml)
		if got := of(checkLog(t, w.String(), &p), delayBoundsID); len(got) != tc.want {
			t.Errorf("%q: %d findings, want %d:%s", tc.toml, len(got), tc.want, describe(got))
		}
	}
}

func TestDelayBoundsWithoutPolicy(t *testing.T) {
	// only attempt 0: nothing to infer a policy from
	var w strings.Builder
	newDevLog(&w, "dev-0001", 0).drop().wait(0.4).connect()
	newDevLog(&w, "dev-0002", 0).drop().wait(0.9).connect()
	res := checkLog(t, w.String(), nil)
	if res.Summary.Policy.Source != "none" {
		t.Fatalf("policy %s, want none", res.Summary.Policy.Source)
	}
	if got := of(res, delayBoundsID); len(got) > 0 {
		t.Errorf("findings without a policy:%s", describe(got))
	}
	n := 0
	for _, note := range res.Summary.Notes {
		if strings.HasPrefix(note, delayBoundsID+": ") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d delay-bounds notes, want 1: %q", n, res.Summary.Notes)
	}
}

func TestDelayBoundsInferred(t *testing.T) {
	var w strings.Builder
	retryLog(&w, "dev-0001", []float64{0.61, 1.42, 3.97, 7.2})
	retryLog(&w, "dev-0002", []float64{0.98, 1.95, 2.4, 5.5})
	// inferred: base 0.98, multiplier 1.95/0.98 = 1.99, so the ceiling at
	// attempt 2 is 3.88 s, 4.27 s with the margin: dev-0001's 3.97 s is
	// within it, dev-0003's 9.5 s is not
	retryLog(&w, "dev-0003", []float64{0.33, 0.8, 9.5})
	res := checkLog(t, w.String(), nil)
	got := of(res, delayBoundsID)
	if len(got) != 1 || got[0].Device != "dev-0003" {
		t.Fatalf("want one finding for dev-0003:%s", describe(got))
	}
	if !strings.Contains(got[0].Explanation, "inferred from the log") || !strings.Contains(got[0].Explanation, "10% of the bound") {
		t.Errorf("explanation does not say the policy is inferred: %s", got[0].Explanation)
	}
	if got[0].Severity != Warning {
		t.Errorf("severity %s against an inferred policy, want warning", got[0].Severity)
	}
}
