package analyze

import (
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// The spacing, connect-budget and policy-capacity rules on simulated
// fleets, whose behaviour the model fixes: they must flag the fleets the
// model makes break the promise, and only those.

// declaredPreset returns preset name as a policy file declares it, with the
// extra TOML lines.
func declaredPreset(t testing.TB, name, extra string) *policy.Policy {
	t.Helper()
	p := simPreset(t, name)
	return mustPolicy(t, string(p.AppendTOML(nil))+extra)
}

// simFindings simulates cfg and checks the log against pol, returning the
// findings of rule, the notes and simulate's figures.
func simFindings(t *testing.T, cfg simulate.Config, pol *policy.Policy, rule string) ([]Finding, simulate.Stats) {
	t.Helper()
	dir, st := simDataset(t, cfg)
	res, err := Check(dir, Options{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	return of(res, rule), st
}

// simFindingsWith is simFindings with options.
func simFindingsWith(t *testing.T, cfg simulate.Config, opts Options, rule string) []Finding {
	t.Helper()
	dir, _ := simDataset(t, cfg)
	res, err := Check(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return of(res, rule)
}

func TestSimSpacing(t *testing.T) {
	pol := declaredPreset(t, "full-jitter", "")
	cfg := simulate.Config{Devices: 400, Outage: 20 * time.Second, Policy: *pol, Seed: 5, DevicesPerHost: 4, Capacity: 50}
	if got, _ := simFindings(t, cfg, pol, "spacing"); len(got) > 0 {
		t.Errorf("a fleet that spaces its opens 0.25 s per host:%s", describe(got))
	}
	// the same clients without the spacing gate, checked against the
	// declared 0.25 s
	cfg.Policy.MinConnectSpacingS = 0
	got, _ := simFindings(t, cfg, pol, "spacing")
	t.Logf("without the spacing gate: %d of 100 hosts flagged", len(got))
	if len(got) < 10 {
		t.Errorf("without the spacing gate: %d hosts flagged, want at least 10", len(got))
	}
	for _, f := range got {
		if f.Device[:3] != "gw-" {
			t.Errorf("finding for %s, want a gw- host", f.Device)
		}
	}
}

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
