package analyze

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

// opensAt returns a log of devices that each open one socket at the
// given offsets (seconds after 14:17:30Z) and connect.
func opensAt(offsets ...float64) string {
	var devs []auditDev
	for i, o := range offsets {
		devs = append(devs, auditDev{id: fmt.Sprintf("dev-%04d", i), steps: []auditStep{{o, 0, true}}, pending: -1})
	}
	return auditLog(devs...)
}

func budgetPolicy(perS, window float64) string {
	return fmt.Sprintf("delay = \"fixed\"\nbase_delay_s = 5\nconnect_budget_per_s = %v\nconnect_budget_window_s = %v\n", perS, window)
}

func TestConnectBudgetUndeclared(t *testing.T) {
	log := opensAt(1, 1, 1, 1, 1, 1)
	res := checkLog(t, log, nil)
	if got := of(res, "connect-budget"); len(got) > 0 || !hasNote(res, "connect-budget: connect_budget_per_s is not declared") {
		t.Errorf("no policy: findings%s; notes %q", describe(got), res.Summary.Notes)
	}
	// the advice names the key and the file or preset that lacks it
	for name, want := range map[string]string{
		"fleet/policy.toml": "connect_budget_per_s is not declared in fleet/policy.toml, and the log cannot show it: add connect_budget_per_s to that file",
		"full-jitter":       `the preset "full-jitter" does not declare connect_budget_per_s`,
	} {
		res = checkLogWith(t, log, Options{Policy: mustPolicy(t, "delay = \"fixed\"\nbase_delay_s = 5\n"), PolicyName: name})
		if !hasNote(res, "connect-budget: "+want) {
			t.Errorf("policy %s: notes %q", name, res.Summary.Notes)
		}
	}
	res = checkLog(t, log, mustPolicy(t, "delay = \"fixed\"\nbase_delay_s = 5\nconnect_budget_per_s = 0\n"))
	if got := of(res, "connect-budget"); len(got) > 0 || !hasNote(res, "connect-budget: connect_budget_per_s is 0") {
		t.Errorf("budget 0: findings%s; notes %q", describe(got), res.Summary.Notes)
	}
}

func TestConnectBudgetWindows(t *testing.T) {
	at := func(s float64) int64 { return auditStart.Add(secondsDur(s)).UnixNano() }
	for _, tc := range []struct {
		name           string
		log            string
		perS, window   float64
		peaks          []int64 // the peak of each finding
		starts, ends   []int64
		explanationHas string
	}{
		// no whole second holds more than 4, the window from 0.6 holds 6
		{name: "sliding", log: opensAt(0.6, 0.7, 0.8, 0.9, 1.1, 1.2), perS: 5, window: 1,
			peaks: []int64{6}, starts: []int64{at(0.6)}, ends: []int64{at(1.201)},
			explanationHas: "The peak: 6 socket-opens in [2026-11-30T14:17:30.6Z, 2026-11-30T14:17:31.6Z), 1.2× the budget."},
		// a window is half-open: 5 in [0, 1), the sixth at 1.0 is in the next
		{name: "half-open", log: opensAt(0, 0.2, 0.4, 0.6, 0.8, 1.0), perS: 5, window: 1},
		// overlapping over-budget windows make one finding
		{name: "merged", log: opensAt(0, 0, 0, 0, 0, 0, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9), perS: 5, window: 1,
			peaks: []int64{12}, starts: []int64{at(0)}, ends: []int64{at(0.901)}},
		// windows that only touch make separate findings
		{name: "separate", log: opensAt(0, 0, 0, 0, 0, 0, 1.0, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5), perS: 5, window: 1,
			peaks: []int64{6, 7}, starts: []int64{at(0), at(1.0)}, ends: []int64{at(0.001), at(1.501)}},
		// 2/s over 5 s allows 10 in any 5 s: 11 in 4.5 s is above it,
		// though no second holds more than 3
		{name: "long window", log: opensAt(0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.4, 4.5), perS: 2, window: 5,
			peaks: []int64{11}, starts: []int64{at(0)}, ends: []int64{at(4.501)},
			explanationHas: "at most 2 × 5 = 10 socket-opens in any 5 s window"},
		{name: "long window below", log: opensAt(0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.4, 5), perS: 2, window: 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checkLog(t, tc.log, mustPolicy(t, budgetPolicy(tc.perS, tc.window)))
			got := of(res, "connect-budget")
			slices.SortFunc(got, func(a, b Finding) int { return int(a.Start - b.Start) })
			if len(got) != len(tc.peaks) {
				t.Fatalf("%d findings, want %d:%s", len(got), len(tc.peaks), describe(got))
			}
			for i, f := range got {
				if !strings.HasPrefix(f.Message, fmt.Sprintf("%d socket-opens", tc.peaks[i])) || f.Start != tc.starts[i] || f.End != tc.ends[i] {
					t.Errorf("finding %d: %q [%d, %d]; want peak %d in [%d, %d]", i, f.Message, f.Start, f.End, tc.peaks[i], tc.starts[i], tc.ends[i])
				}
				if f.Device != Fleet || f.Severity != Error || len(f.Records) == 0 {
					t.Errorf("finding %d: device %q severity %v records %v", i, f.Device, f.Severity, f.Records)
				}
			}
			if tc.explanationHas != "" && !strings.Contains(got[0].Explanation, tc.explanationHas) {
				t.Errorf("explanation %q does not say %q", got[0].Explanation, tc.explanationHas)
			}
		})
	}
}

func TestTimeHistWindows(t *testing.T) {
	h := newTimeHist(int64(time.Millisecond))
	// buckets across chunk boundaries, and before the Unix epoch
	for _, ms := range []int64{-70, -1, 0, 0, 63, 64, 1000, 1063, 5000} {
		h.add(ms*int64(time.Millisecond), Ref{Row: ms}, "d")
	}
	type win struct{ first, last, n int64 }
	var got []win
	h.windows(1000, func(first, last, n int64) { got = append(got, win{first, last, n}) })
	want := []win{{-70, 64, 6}, {-1, 64, 5}, {0, 64, 4}, {63, 1000, 3}, {64, 1063, 3}, {1000, 1063, 2}, {1063, 1063, 1}, {5000, 5000, 1}}
	if !slices.Equal(got, want) {
		t.Errorf("windows = %v\nwant      %v", got, want)
	}
	s := h.samplesIn(0, int64(64*time.Millisecond), 10)
	if len(s) != 3 || s[0].At != 0 || s[2].At != int64(63*time.Millisecond) {
		t.Errorf("samplesIn = %v", s)
	}
}

// TestSimConnectBudget: connect-budget on simulated fleets, which the
// model fixes: it must flag the fixed-timer fleet that overruns the
// budget, and not the jittered one.
func TestSimConnectBudget(t *testing.T) {
	const budget = "connect_budget_per_s = 100\n"
	fixed := simulate.Config{Devices: 500, Outage: 12 * time.Second, Policy: simPreset(t, "fixed"), Seed: 1, Capacity: 100}
	got, st := simFindings(t, fixed, declaredPreset(t, "fixed", budget), "connect-budget")
	t.Logf("fixed fleet: simulate's peak %d/s, %d findings", st.PeakPerS, len(got))
	if len(got) == 0 {
		t.Errorf("fixed fleet, peak %d/s against a budget of 100/s: no finding", st.PeakPerS)
	}
	for _, f := range got {
		if f.Device != Fleet || len(f.Records) == 0 {
			t.Errorf("finding %s with %d records, want the fleet with records", f.Device, len(f.Records))
		}
	}
	jitter := simulate.Config{Devices: 40, Outage: 12 * time.Second, Policy: simPreset(t, "full-jitter"), Seed: 1, Capacity: 100}
	if got, st := simFindings(t, jitter, declaredPreset(t, "full-jitter", budget), "connect-budget"); len(got) > 0 {
		t.Errorf("full-jitter fleet, peak %d/s against a budget of 100/s:%s", st.PeakPerS, describe(got))
	}
}
