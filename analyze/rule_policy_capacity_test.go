package analyze

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

// lostAt returns a log of devices that lose the broker at the given
// offsets (seconds after 14:17:30Z), retry after 0.5 s and connect.
func lostAt(offsets ...float64) string {
	var devs []auditDev
	for i, o := range offsets {
		devs = append(devs, auditDev{id: fmt.Sprintf("dev-%04d", i), t0: secondsDur(o), steps: []auditStep{{0.5, 0, true}}, pending: -1})
	}
	return auditLog(devs...)
}

func groupAt(n int, at float64) []float64 {
	var out []float64
	for i := range n {
		out = append(out, at+float64(i)*0.001)
	}
	return out
}

func TestPolicyCapacityUndeclared(t *testing.T) {
	log := lostAt(groupAt(50, 0)...)
	res := checkLog(t, log, mustPolicy(t, "delay = \"fixed\"\nbase_delay_s = 5\n"))
	if got := of(res, "policy-capacity"); len(got) > 0 || !hasNote(res, "policy-capacity: connect_budget_per_s is not declared") {
		t.Errorf("no budget: findings%s; notes %q", describe(got), res.Summary.Notes)
	}
	res = checkLog(t, log, nil)
	if got := of(res, "policy-capacity"); len(got) > 0 || !hasNote(res, "policy-capacity: ") {
		t.Errorf("no policy: findings%s; notes %q", describe(got), res.Summary.Notes)
	}
}

func TestPolicyCapacity(t *testing.T) {
	const budget = "connect_budget_per_s = 5\n"
	for _, tc := range []struct {
		name, policy string
		lost         []float64
		want         []string // in the explanation; none: no finding
	}{
		{name: "fixed, one instant", policy: "delay = \"fixed\"\nbase_delay_s = 5\n" + budget, lost: groupAt(6, 0),
			want: []string{"N = 6 devices", "[5, 5] s: a first window W = 0 s", "in one instant", "N/1 = 6 connects/s",
				"at least N/budget = 6/5 = 1.2 s", "use full_jitter with base_delay_s = 1.2"}},
		{name: "fixed, within the budget window", policy: "delay = \"fixed\"\nbase_delay_s = 5\n" + budget, lost: groupAt(5, 0)},
		{name: "equal jitter below", policy: "delay = \"equal_jitter\"\nbase_delay_s = 4\nmax_delay_s = 60\nmultiplier = 2\n" + budget,
			lost: groupAt(10, 0)},
		{name: "equal jitter above", policy: "delay = \"equal_jitter\"\nbase_delay_s = 4\nmax_delay_s = 60\nmultiplier = 2\n" + budget,
			lost: groupAt(12, 0), want: []string{"[2, 4] s: a first window W = 2 s", "N/W = 12/2 = 6 connects/s", "base_delay_s = 4.8"}},
		{name: "immediate first retry", policy: "delay = \"full_jitter\"\nbase_delay_s = 1\nmax_delay_s = 60\nmultiplier = 2\nimmediate_first_retry = true\n" + budget,
			lost: groupAt(6, 0), want: []string{"W = 0 s", "drop immediate_first_retry"}},
		{name: "autopaho min delay", policy: "delay = \"full_jitter\"\nmin_delay_s = 5\nbase_delay_s = 10\nmax_delay_s = 600\nmultiplier = 1.5\n" + budget,
			lost: groupAt(30, 0), want: []string{"[5, 10] s: a first window W = 5 s", "N/W = 30/5 = 6", "base_delay_s = 11 (max_delay_s >= 11), keeping min_delay_s = 5"}},
		// 3 together, then 7 together: N is the larger group
		{name: "largest group", policy: "delay = \"full_jitter\"\nbase_delay_s = 1\nmax_delay_s = 60\nmultiplier = 2\n" + budget,
			lost: append(groupAt(3, 0), groupAt(7, 20)...), want: []string{"N = 7 devices", "outages starting from 2026-11-30T14:17:50Z"}},
		{name: "groups apart", policy: "delay = \"full_jitter\"\nbase_delay_s = 1\nmax_delay_s = 60\nmultiplier = 2\n" + budget,
			lost: append(groupAt(5, 0), groupAt(5, 1.001)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checkLog(t, lostAt(tc.lost...), mustPolicy(t, tc.policy))
			got := of(res, "policy-capacity")
			if len(tc.want) == 0 {
				if len(got) > 0 {
					t.Errorf("unexpected findings:%s", describe(got))
				}
				return
			}
			if len(got) != 1 || got[0].Device != Fleet || len(got[0].Records) == 0 {
				t.Fatalf("want one fleet finding with records, got:%s", describe(got))
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0].Explanation, w) {
					t.Errorf("explanation %q does not say %q", got[0].Explanation, w)
				}
			}
		})
	}
}

// TestPolicyCapacityOncePerDevice checks that a device whose connection
// drops twice within LostTogether counts once.
func TestPolicyCapacityOncePerDevice(t *testing.T) {
	var devs []auditDev
	for i := range 3 {
		// lost at 0, reconnected at 0.15, lost again at 0.2 (a flap)
		d := auditDev{id: fmt.Sprintf("dev-%d", i), steps: []auditStep{{0.1, 0, true}}, pending: -1}
		devs = append(devs, d, auditDev{id: d.id, t0: 200 * time.Millisecond, steps: []auditStep{{0.1, 0, true}}, pending: -1})
	}
	res := checkLog(t, auditLog(devs...), mustPolicy(t, "delay = \"fixed\"\nbase_delay_s = 0.1\nconnect_budget_per_s = 5\n"))
	if got := of(res, "policy-capacity"); len(got) > 0 {
		t.Errorf("3 devices counted more than once:%s", describe(got))
	}
}

// TestSimPolicyCapacity: policy-capacity on simulated fleets, which the
// model fixes: a first window of 1 s cannot absorb 2000 devices within a
// budget of 100 a second, and absorbs 50.
func TestSimPolicyCapacity(t *testing.T) {
	pol := declaredPreset(t, "full-jitter", "connect_budget_per_s = 100\n")
	for _, tc := range []struct {
		devices int
		flagged bool
	}{{2000, true}, {50, false}} {
		cfg := simulate.Config{Devices: tc.devices, Outage: time.Minute, Policy: *pol, Seed: 2, Horizon: 3 * time.Second}
		got, _ := simFindings(t, cfg, pol, "policy-capacity")
		if flagged := len(got) > 0; flagged != tc.flagged {
			t.Errorf("%d devices, base 1 s, budget 100/s: flagged %v, want %v:%s", tc.devices, flagged, tc.flagged, describe(got))
		}
	}
}
