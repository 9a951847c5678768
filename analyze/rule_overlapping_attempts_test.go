package analyze

import (
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

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
