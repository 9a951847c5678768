package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

// startup-storm and backlog on simulated fleets: a cold boot with and
// without a startup spread, and outboxes with and without a limit.

func TestStartupStormSimulated(t *testing.T) {
	plain := declaredPreset(t, "full-jitter", "")
	spread := declaredPreset(t, "full-jitter", "startup_spread_s = 60\n")
	cases := []struct {
		name     string
		cfg      simulate.Config
		checkAs  bool // check against the declared spread (else the fleet's own policy, no spread declared)
		wantFlag bool
	}{
		{"no spread, judged against 60 s", simulate.Config{Policy: *plain}, true, true},
		{"no spread, the broker takes 20 a second", simulate.Config{Policy: *plain, Capacity: 20}, false, true},
		// a boot that brings every device up in one second is a storm
		// against the default spread even when the broker took them all
		{"no spread, the broker takes all at once", simulate.Config{Policy: *plain}, false, true},
		{"no spread, judged against a default spread of 0", simulate.Config{Policy: *plain}, false, false},
		{"a 60 s spread", simulate.Config{Policy: *spread}, true, false},
		{"a 60 s spread, the broker takes 20 a second", simulate.Config{Policy: *spread, Capacity: 20}, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Devices, cfg.ColdBoot, cfg.Seed, cfg.Horizon = 500, true, 3, 3*time.Minute
			pol := plain
			if tc.checkAs {
				pol = spread
			}
			var got []Finding
			if strings.Contains(tc.name, "default spread of 0") {
				got = simFindingsWith(t, cfg, Options{Policy: pol, Thresholds: map[string]map[string]float64{startupStormID: {"default_spread_s": 0}}}, startupStormID)
			} else {
				got, _ = simFindings(t, cfg, pol, startupStormID)
			}
			if (len(got) > 0) != tc.wantFlag {
				t.Errorf("flagged %d cold boots, want flagged %v:%s", len(got), tc.wantFlag, describe(got))
			}
			for _, f := range got {
				if f.Device != Fleet || len(f.Records) == 0 {
					t.Errorf("finding %+v: want a fleet finding resting on records", f)
				}
			}
		})
	}
}

func TestBacklogSimulated(t *testing.T) {
	plain := declaredPreset(t, "full-jitter", "")
	limited := declaredPreset(t, "full-jitter", "outbox_limit = 100\n")
	small := declaredPreset(t, "full-jitter", "outbox_limit = 5\n")
	cases := []struct {
		name           string
		fleet, check   float64 // the outbox limit the devices keep, and the one declared (0: none)
		wantDevices    [2]int  // least and most devices flagged
		wantFleetFlush bool
	}{
		// a jittered fleet of 200 brings at most 9 devices back in one second
		{name: "unbounded", wantDevices: [2]int{200, 200}},
		{name: "kept to a declared limit", fleet: 100, check: 100, wantDevices: [2]int{0, 0}},
		{name: "a limit, undeclared", fleet: 100, wantDevices: [2]int{0, 0}},
		{name: "beyond the declared limit", check: 100, wantDevices: [2]int{200, 200}},
		{name: "five messages", fleet: 5, check: 5, wantDevices: [2]int{0, 0}},
		// a fixed timer brings the fleet back in one second, every outbox with it
		{name: "phase-locked", fleet: -1, check: 100, wantDevices: [2]int{0, 0}, wantFleetFlush: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := simulate.Config{Devices: 200, Outage: 5 * time.Minute, Seed: 4, OutboxPerS: 1, Policy: *plain}
			switch tc.fleet {
			case -1:
				cfg.Policy = *declaredPreset(t, "fixed", "outbox_limit = 100\n")
			case 100:
				cfg.Policy = *limited
			case 5:
				cfg.Policy = *small
			}
			pol := plain
			switch tc.check {
			case 100:
				pol = limited
			case 5:
				pol = small
			}
			got, _ := simFindings(t, cfg, pol, backlogID)
			devices, fleet := 0, 0
			for _, f := range got {
				if f.Device == Fleet {
					fleet++
				} else {
					devices++
				}
			}
			if devices < tc.wantDevices[0] || devices > tc.wantDevices[1] {
				t.Errorf("%d devices flagged, want %v:%s", devices, tc.wantDevices, describe(got[:min(2, len(got))]))
			}
			if (fleet > 0) != tc.wantFleetFlush {
				t.Errorf("%d flush findings, want flagged %v", fleet, tc.wantFleetFlush)
			}
		})
	}
}

// A simulated fleet whose records carry attempt_ids keeps one attempt in
// flight per device, flaps and a shared host spacing included.
func TestOverlappingAttemptsSimulated(t *testing.T) {
	pol := declaredPreset(t, "full-jitter", "")
	cfg := simulate.Config{Devices: 300, Outage: time.Minute, Seed: 5, Policy: *pol, AttemptIDs: true, DevicesPerHost: 4,
		Capacity: 30, Flaps: 2, FlapUp: 3 * time.Second, FlapDown: 10 * time.Second}
	if got, _ := simFindings(t, cfg, pol, overlappingAttemptsID); len(got) > 0 {
		t.Errorf("a fleet with one attempt in flight at a time:%s", describe(got[:min(3, len(got))]))
	}
}

// The fleet's activity holds the outbox flushes the fleet figures count:
// a histogram over the whole log sums to FleetStats.Flushed.
func TestActivityFlushes(t *testing.T) {
	dir, _ := simDataset(t, simulate.Config{Devices: 100, Outage: time.Minute, Seed: 2, OutboxPerS: 2,
		Policy: *declaredPreset(t, "full-jitter", ""), Flaps: 1, FlapUp: 5 * time.Second, FlapDown: 10 * time.Second})
	ov, err := Survey(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, last, ok := ov.Activity.Span()
	if !ok {
		t.Fatal("no activity")
	}
	first = min(first, ov.Activity.Flushes[0].At)
	var sum int64
	for _, b := range ov.Activity.Histogram(first, time.Second, int((last-first)/int64(time.Second))+2) {
		sum += b.Flushed
	}
	if want := ov.Result.Summary.Fleet.Flushed; sum != want || want == 0 {
		t.Errorf("histogram flushed %d, the fleet figures %d (want them equal, above 0)", sum, want)
	}
}
