package analyze

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/ingest"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// fleetLog is five devices that lose the broker at 14:17:30Z: four
// recover after 1, 2, 3 and 4 s, the fifth never does.
func fleetLog(pending float64) string {
	return auditLog(
		auditDev{id: "dev-1", steps: []auditStep{{0.95, 0, true}}, pending: -1},
		auditDev{id: "dev-2", steps: []auditStep{{0.2, 0, false}, {1.7, 0, true}}, pending: -1},
		auditDev{id: "dev-3", steps: []auditStep{{0.4, 0, false}, {2.5, 0, true}}, pending: -1},
		auditDev{id: "dev-4", steps: []auditStep{{0.6, 0, false}, {3.3, 0, true}}, pending: -1},
		auditDev{id: "dev-5", steps: []auditStep{{0.8, 0, false}, {2.0, 0, false}}, pending: pending},
	)
}

// TestFleetStatsHandMade checks the figures of fleetLog by hand. The
// socket-opens are at 0.2, 0.4, 0.6, 0.8, 0.95 | 1.95 | 2.85, 2.95 | 3.95
// s; the times to recover 1, 2, 3 and 4 s, so Jain's index is
// (1+2+3+4)² / (4·(1+4+9+16)) = 100/120.
func TestFleetStatsHandMade(t *testing.T) {
	res := checkLog(t, fleetLog(-1), nil)
	st := res.Summary.Fleet
	sec := time.Second
	if st.Devices != 5 || st.Records != 23 || st.Attempts != 9 {
		t.Errorf("Devices, Records, Attempts = %d, %d, %d; want 5, 23, 9", st.Devices, st.Records, st.Attempts)
	}
	if st.Window != sec || st.First != auditStart.UnixNano() || !slices.Equal(st.PerWindow, []int64{5, 1, 2, 1}) {
		t.Errorf("Window %v, First %d, PerWindow %v; want 1s, %d, [5 1 2 1]", st.Window, st.First, st.PerWindow, auditStart.UnixNano())
	}
	if st.Peak != 5 || st.PeakAt != auditStart.UnixNano() {
		t.Errorf("Peak %d at %d, want 5 at %d", st.Peak, st.PeakAt, auditStart.UnixNano())
	}
	if st.Lost != 5 || st.Recovered != 4 || !slices.Equal(st.TTR.Values(), []time.Duration{sec, 2 * sec, 3 * sec, 4 * sec}) {
		t.Errorf("Lost %d, Recovered %d, TTR %v; want 5, 4, [1s 2s 3s 4s]", st.Lost, st.Recovered, st.TTR)
	}
	if st.TTR50 != 2*sec || st.TTR90 != 4*sec || st.TTR99 != 4*sec || st.TTRMax != 4*sec {
		t.Errorf("TTR p50/p90/p99/max = %v/%v/%v/%v, want 2s/4s/4s/4s", st.TTR50, st.TTR90, st.TTR99, st.TTRMax)
	}
	if math.Abs(st.Fairness-100.0/120) > 1e-12 {
		t.Errorf("Fairness = %v, want %v", st.Fairness, 100.0/120)
	}
}

// TestFleetStatsPendingOpen: dev-5's log ends on a backoff_wait whose
// socket-open (at 3.4 s) lies after its last record, so the log does not
// show that open, and FleetStats must not count it.
func TestFleetStatsPendingOpen(t *testing.T) {
	st := checkLog(t, fleetLog(0.5), nil).Summary.Fleet
	if st.Attempts != 9 || !slices.Equal(st.PerWindow, []int64{5, 1, 2, 1}) {
		t.Errorf("Attempts %d, PerWindow %v; want 9, [5 1 2 1]", st.Attempts, st.PerWindow)
	}
}

// TestFleetStatsMatchSimulate checks FleetStats against the figures
// simulate computes from the same run. Both count socket-opens in
// seconds, simulate from the drop and FleetStats from the Unix second,
// so the runs start on a whole second (as simulate's default does).
func TestFleetStatsMatchSimulate(t *testing.T) {
	fullJitter, fixed, exponential := simPreset(t, "full-jitter"), simPreset(t, "fixed"), simPreset(t, "exponential")
	for _, tc := range []struct {
		name string
		cfg  simulate.Config
	}{
		{"full jitter over capacity", simulate.Config{Devices: 300, Outage: 20 * time.Second, Policy: fullJitter, Seed: 1, Capacity: 50}},
		{"exponential with flaps", simulate.Config{Devices: 200, Outage: 20 * time.Second, Policy: exponential, Seed: 2,
			Flaps: 2, FlapUp: 3 * time.Second, FlapDown: 10 * time.Second}},
		{"bad credentials behind gateways", simulate.Config{Devices: 300, Outage: 20 * time.Second, Policy: fullJitter, Seed: 3,
			Capacity: 50, BadAuth: 0.1, DevicesPerHost: 4}},
		{"log cut mid-outage", simulate.Config{Devices: 300, Outage: 20 * time.Second, Policy: fixed, Seed: 4, Horizon: 4 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, want := simDataset(t, tc.cfg)
			res, err := Check(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			compareSimStats(t, "FleetStats", res.Summary.Fleet, want)
		})
	}
}

// compareSimStats checks the figures FleetStats and simulate.Stats share.
func compareSimStats(t *testing.T, what string, got *FleetStats, want simulate.Stats) {
	t.Helper()
	start := simulate.DefaultStart.UnixNano()
	peakAt := time.Duration(got.PeakAt - start)
	if got.Peak == 0 {
		peakAt = 0
	}
	if got.Devices != want.Devices || got.Records != want.Records || got.Attempts != want.Attempts || got.Recovered != want.Recovered {
		t.Errorf("%s: Devices, Records, Attempts, Recovered = %d, %d, %d, %d; simulate %d, %d, %d, %d", what,
			got.Devices, got.Records, got.Attempts, got.Recovered, want.Devices, want.Records, want.Attempts, want.Recovered)
	}
	if got.Peak != want.PeakPerS || peakAt != want.PeakAt {
		t.Errorf("%s: Peak %d at %v; simulate %d at %v", what, got.Peak, peakAt, want.PeakPerS, want.PeakAt)
	}
	if g, w := []time.Duration{got.TTR50, got.TTR90, got.TTR99, got.TTRMax}, []time.Duration{want.TTR50, want.TTR90, want.TTR99, want.TTRMax}; !slices.Equal(g, w) {
		t.Errorf("%s: TTR p50/p90/p99/max = %v; simulate %v", what, g, w)
	}
	var sum, sq float64
	for _, x := range got.TTR.Values() {
		sum, sq = sum+x.Seconds(), sq+x.Seconds()*x.Seconds()
	}
	if n := got.TTR.Len(); n > 0 && math.Abs(got.Fairness-sum*sum/(float64(n)*sq)) > 1e-9 {
		t.Errorf("%s: Fairness %v, Jain's index of TTR %v", what, got.Fairness, sum*sum/(float64(n)*sq))
	}
}

// simDataset simulates cfg into a dataset and returns its directory and
// simulate's figures.
func simDataset(t testing.TB, cfg simulate.Config) (string, simulate.Stats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := simulate.Run(context.Background(), cfg, &buf)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "sim.ndjson")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ds := filepath.Join(dir, "ds")
	if _, err := ingest.Run(context.Background(), ds, []ingest.Source{{Name: in}}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	return ds, st
}

func simPreset(t testing.TB, name string) policy.Policy {
	t.Helper()
	p, err := policy.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
