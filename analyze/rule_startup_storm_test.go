package analyze

import (
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

// TestStartupStormSimulated: startup-storm on simulated cold boots, with
// and without a startup spread.
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
