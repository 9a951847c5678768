package analyze

import (
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

// TestIncidentSimulated holds the incident check infers to the simulator's
// truth: one incident at the drop taking every device down, and recovery
// percentiles within 2 s of the simulator's (a device that recovered at
// all connected once, so the two definitions agree), through the
// pathologies that leave one loss per device.
func TestIncidentSimulated(t *testing.T) {
	for _, tc := range []struct {
		name    string
		devices int
		tweak   func(*simulate.Config)
	}{
		{"plain", 200, nil},
		{"plain", 2000, nil},
		{"short-outage", 500, func(c *simulate.Config) { c.Outage = 5 * time.Second }},
		{"capacity", 1000, func(c *simulate.Config) { c.Capacity = 50 }},
		{"hosts", 400, func(c *simulate.Config) { c.DevicesPerHost, c.Policy.MinConnectSpacingS = 4, 0.25 }},
		{"bad-auth", 300, func(c *simulate.Config) { c.BadAuth, c.Policy.AuthMinDelayS = 0.1, 30 }},
		{"library", 300, func(c *simulate.Config) { lib := c.Policy; lib.Delay = "exponential"; c.Library = &lib }},
	} {
		cfg := simulate.Config{Devices: tc.devices, Outage: time.Minute, Policy: gridFleet{policy: "full-jitter"}.resolve(t), Seed: 9}
		if tc.tweak != nil {
			tc.tweak(&cfg)
		}
		res, st := checkSimulatedStats(t, cfg, nil)
		incs := res.Summary.Fleet.Incidents
		if len(incs) != 1 {
			t.Errorf("%s, %d devices: %d incidents, want 1", tc.name, tc.devices, len(incs))
			continue
		}
		in := incs[0]
		if in.LostAt != simulate.DefaultStart.UnixNano() || in.DevicesLost != tc.devices || in.LossInferred {
			t.Errorf("%s, %d devices: incident at %s with %d devices (inferred %v), want the drop at %s with all", tc.name, tc.devices,
				timeText(in.LostAt), in.DevicesLost, in.LossInferred, simulate.DefaultStart)
		}
		if in.Recovered != st.Recovered {
			t.Errorf("%s, %d devices: %d recovered, the simulator says %d", tc.name, tc.devices, in.Recovered, st.Recovered)
		}
		for _, p := range []struct{ got, want time.Duration }{{in.TTR50, st.TTR50}, {in.TTR90, st.TTR90}, {in.TTR99, st.TTR99}} {
			if (p.got - p.want).Abs() > 2*time.Second {
				t.Errorf("%s, %d devices: time to recover %v, the simulator says %v", tc.name, tc.devices, p.got, p.want)
			}
		}
	}
}
