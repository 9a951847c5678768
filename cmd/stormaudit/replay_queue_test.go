package main

import (
	"bytes"
	"testing"

	"github.com/stormaudit/stormaudit/replay"
)

// TestReplayQueuedRealClients replays the recorded schedule of real Go
// paho clients (testdata/realclients/paho-go: 200 devices, the broker
// killed for 25 s) five times faster with 20 messages queued for each
// device while its link was down: every device that came back drains its
// whole queue, once, and loses nothing; one that did not come back within
// the schedule loses its queue; and the failed attempts of the outage are
// the link's, not the broker's.
func TestReplayQueuedRealClients(t *testing.T) {
	code, out, stderr := runArgs(t, "replay", "-q", "--speed", "5", "--connack-slo", "1m", "--max-lateness", "1m", "--queued", "20", "--link-down", "incident",
		"--format", "json", "../../testdata/realclients/paho-go/clients.ndjson")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	reps, err := replay.ReadJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	r := reps[0]
	if r.Devices != 200 || r.ConnectsLinkDown == 0 || r.ConnectsFailed != 0 || !r.Held {
		t.Errorf("devices %d, connects failed on the link %d, by the broker %d, held %v", r.Devices, r.ConnectsLinkDown, r.ConnectsFailed, r.Held)
	}
	if n := r.Recovered; n < 190 || r.Published != 4000 || r.Redelivered != 20*n || r.Lost != 20*(200-n) || r.Drained != n || r.Duplicates != 0 {
		t.Errorf("%d devices back: published %d, redelivered %d, lost %d, drained %d, duplicates %d",
			n, r.Published, r.Redelivered, r.Lost, r.Drained, r.Duplicates)
	}
	if r.Waves == nil || r.RedeliveryPeakPerS == 0 || r.RedeliveryPeakPerS > r.Redelivered {
		t.Errorf("peak %d/s of %d, waves %v", r.RedeliveryPeakPerS, r.Redelivered, r.Waves)
	}
}
