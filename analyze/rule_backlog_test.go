package analyze

import (
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

// TestBacklogSimulated: backlog on simulated fleets whose outboxes grow
// with and without a limit, and flush jittered or all at once. A device
// that keeps its limit is not flagged, but what its full outbox dropped is
// said, as info, on every device of a fleet with a limit it reaches.
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
			devices, fleet, dropped := 0, 0, 0
			for _, f := range got {
				switch {
				case f.Kind == "backlog/outbox-dropped":
					if f.Severity != Info {
						t.Errorf("%s is %v, want info: dropping at its limit is what the device should do", f.Kind, f.Severity)
					}
					dropped++
				case f.Device == Fleet:
					fleet++
				default:
					devices++
				}
			}
			if devices < tc.wantDevices[0] || devices > tc.wantDevices[1] {
				t.Errorf("%d devices flagged, want %v:%s", devices, tc.wantDevices, describe(got[:min(2, len(got))]))
			}
			if want := map[bool]int{true: 200}[tc.fleet != 0]; dropped != want {
				t.Errorf("%d devices said to drop from a full outbox, want %d", dropped, want)
			}
			if (fleet > 0) != tc.wantFleetFlush {
				t.Errorf("%d flush findings, want flagged %v", fleet, tc.wantFleetFlush)
			}
		})
	}
}
