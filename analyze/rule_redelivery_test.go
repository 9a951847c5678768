package analyze

import (
	"path/filepath"
	"testing"
)

// kinds counts the findings of rule redelivery by kind.
func redeliveryKinds(t *testing.T, log string, thresholds map[string]float64) map[string]int {
	t.Helper()
	opts := Options{Thresholds: map[string]map[string]float64{redeliveryID: thresholds}}
	res := checkFilesWith(t, t.TempDir(), opts, filepath.Join("testdata/rules/redelivery", log))
	kinds := map[string]int{}
	for _, f := range of(res, redeliveryID) {
		kinds[f.Kind]++
	}
	return kinds
}

// TestRedeliveryThresholds holds the rule to its thresholds on its
// positive log: twelve devices back in one second, each redelivered the
// 60 messages queued over its 60 s away (a recorded handling rate of 1 a
// second, 12 for the fleet), 720 in that second; one device's
// application handed 2 of them twice.
func TestRedeliveryThresholds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		thresholds map[string]float64
		wave, dups int
	}{
		{"defaults", nil, 1, 1},
		{"factor just under the ratio", map[string]float64{"factor": 59}, 1, 1},
		{"factor at the ratio", map[string]float64{"factor": 60}, 0, 1}, // 720 is not over 60 × 12
		{"min_messages at the peak", map[string]float64{"min_messages": 720}, 1, 1},
		{"min_messages over it", map[string]float64{"min_messages": 721}, 0, 1},
		{"min_devices over the devices", map[string]float64{"min_devices": 13}, 0, 1},
		{"min_duplicates at the count", map[string]float64{"min_duplicates": 2}, 1, 1},
		{"min_duplicates over it", map[string]float64{"min_duplicates": 3}, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := redeliveryKinds(t, "positive.ndjson", tc.thresholds)
			if k["redelivery/wave"] != tc.wave || k["redelivery/duplicates-delivered"] != tc.dups {
				t.Errorf("findings by kind %v, want %d wave and %d duplicates", k, tc.wave, tc.dups)
			}
		})
	}
}

// TestRedeliveryHandlingRate checks the recorded handling rate a wave is
// judged against: the sum, over the incident's recovered losses, of the
// messages redelivered after each over the time from the loss to the
// reconnect.
func TestRedeliveryHandlingRate(t *testing.T) {
	r := newRedelivery()
	r.Handled = []handledLoss{
		{Lost: 10e9, Connected: 70e9, N: 60},      // 1 a second
		{Lost: 10e9, Connected: 10.5e9, N: 3},     // under a second: 3 a second, not 6
		{Lost: 11e9, Connected: 41e9, N: 90},      // 3 a second
		{Lost: 200e9, Connected: 260e9, N: 6_000}, // another incident's
	}
	r.Placed = []flushAt{{At: 70e9, N: 100, Dev: 0}}
	w, _ := r.wave(&Incident{LostAt: 10e9, LastLoss: 11e9, FirstConnectAt: 10.5e9}, 200e9)
	if w.handling != 7 || w.losses != 3 || w.busy.observed != 100 {
		t.Errorf("handling %g from %d losses, observed %d; want 7 from 3, 100", w.handling, w.losses, w.busy.observed)
	}
}
