package simulate

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// TestBrokerLogBeside: the broker's log a run writes has one accept, with
// its will and the device's own status, for every connected record and
// for every device before the drop, and the broker's start before it and
// after the outage and each flap; with the address service down the
// broker stays up, and no log is written.
func TestBrokerLogBeside(t *testing.T) {
	var blog bytes.Buffer
	cfg := Config{Devices: 50, Outage: 20 * time.Second, Policy: window(t, 10), Seed: 2, Flaps: 2, FlapUp: 3 * time.Second,
		FlapDown: 10 * time.Second, BrokerLog: &blog}
	recs, _, _ := run(t, cfg)
	connects := 0
	for i := range recs {
		if recs[i].Outcome == auditfmt.Connected && recs[i].Stage == 0 {
			connects++
		}
	}
	text := blog.String()
	count := func(s string) int { return strings.Count(text, s) }
	if n := count("New client connected from "); n != connects+50 {
		t.Errorf("%d accepts, want %d connected records and the 50 devices before the drop", n, connects)
	}
	if count("Will message specified (7 bytes) (r1, q1).") != connects+50 || count("', ... (6 bytes))") != connects+50 {
		t.Error("an accept without its will or its status")
	}
	if n := count(" running\n"); n != 4 {
		t.Errorf("the broker started %d times, want 4: before the drop, after the outage and after each of 2 flaps", n)
	}
	cfg.AddressDown = true
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "BrokerLog") {
		t.Errorf("a broker log with the address service down: %v", err)
	}
}
