package simulate

import (
	"math"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// TestCommandsQueuedAndExpired: the commands queued for a device while it
// was away are counted on its first useful exchange after the return, all
// of them as redelivered and those older than the TTL on arrival as
// expired, both reckoned from its loss: the drop, or the end of the flap
// its last session came up in. A clean session queues nothing.
func TestCommandsQueuedAndExpired(t *testing.T) {
	const rate, ttl = 2.0, 40 * time.Second
	cfg := Config{Devices: 200, Outage: time.Minute, Policy: window(t, 30), Seed: 3, CommandsPerS: rate, CommandTTL: ttl,
		Flaps: 1, FlapUp: 5 * time.Second, FlapDown: 20 * time.Second}
	recs, _, _ := run(t, cfg)
	upAt := map[string]int64{} // the device's last session connect, µs
	lostAt := map[string]int64{}
	counted := 0
	for i := range recs {
		r := &recs[i]
		if r.Outcome != auditfmt.Connected {
			continue
		}
		if r.Stage != auditfmt.StageService {
			if r.Has&(auditfmt.HasInboundRedelivered|auditfmt.HasInboundExpired) != 0 {
				t.Fatalf("a session record counts commands: %+v", r)
			}
			if up, ok := upAt[r.ClientID]; ok { // it came up in the flap: lost at its end
				lostAt[r.ClientID] = cfg.lostAfter(up)
			}
			upAt[r.ClientID] = at(r)
			continue
		}
		counted++
		back, lost := upAt[r.ClientID], lostAt[r.ClientID]
		want := int64(math.Floor(float64(back-lost) * rate / 1e6))
		wantExp := int64(math.Floor(float64(max(0, back-ttl.Microseconds()-lost)) * rate / 1e6))
		if r.InboundRedelivered != want || r.InboundExpired != wantExp || r.Has&auditfmt.HasInboundExpired == 0 {
			t.Fatalf("%s back at +%d µs, lost at +%d: %d redelivered, %d expired; want %d and %d",
				r.ClientID, back, lost, r.InboundRedelivered, r.InboundExpired, want, wantExp)
		}
	}
	if counted != 200 || len(lostAt) == 0 {
		t.Fatalf("%d devices counted commands, %d came up in the flap: want 200, and some", counted, len(lostAt))
	}

	clean := cfg
	clean.Policy.CleanSession, clean.Flaps, clean.CommandTTL = true, 0, 0
	recs, _, _ = run(t, clean)
	for i := range recs {
		if r := &recs[i]; r.Stage == auditfmt.StageService && (r.InboundRedelivered != 0 || r.Has&auditfmt.HasInboundExpired != 0) {
			t.Fatalf("a clean session brought commands: %+v", r)
		}
	}
}
