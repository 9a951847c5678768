package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
)

// wavePlans returns n devices that lose their link for outage,
// reconnecting on a fixed 5 s timer (the phase-locked fleet) and with full
// jitter, through simulate's model, until horizon.
func wavePlans(t *testing.T, n int, outage, horizon time.Duration) []*Plan {
	t.Helper()
	base := &Plan{Name: "fleet"}
	for i := range n {
		base.Devices = append(base.Devices, Device{ID: fmt.Sprintf("wave-%03d", i), Keepalive: 30})
	}
	var plans []*Plan
	for _, name := range []string{"fixed", "full-jitter"} {
		pol, err := policy.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := WhatIf(context.Background(), base, WhatIfOptions{Policy: pol, Outage: outage, Horizon: horizon, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	return plans
}

// TestRedeliveryWave is the redelivery storm: with 50 messages queued
// for each device while its link was down, the phase-locked fleet comes
// back on one tick and its sessions' queues arrive in one second, at a
// peak at least three times the jittered fleet's, against the embedded
// broker and Mosquitto; every message arrives at a device that returned
// within the 16 s the plans run. It takes about a minute: it runs with
// STORMAUDIT_REPLAY_SLOW=1.
func TestRedeliveryWave(t *testing.T) {
	slow(t)
	plans := wavePlans(t, 100, 6*time.Second, 16*time.Second)
	b := embedded(t, BrokerOptions{MaxQueued: 1000})
	var logBuf bytes.Buffer
	m := startMosquitto(t, "", &logBuf)
	for _, br := range []struct {
		name, addr string
		setup      func(bool)
	}{{"embedded", b.Addr(), b.Setup}, {"mosquitto", m.Addr(), nil}} {
		var peaks []int
		for _, p := range plans {
			rep, err := Run(context.Background(), p, Options{Broker: br.addr, Setup: br.setup, Queue: &Queue{Messages: 50, QoS: 1},
				LinkDown: &Outage{Down: 6 * time.Second}, Hold: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			// a device the horizon ends before its return gets nothing
			if n := rep.Recovered; rep.Redelivered != 50*n || rep.Lost != 50*(100-n) || rep.Duplicates != 0 || rep.Drained != n || n < 80 {
				t.Errorf("%s, %s: %s", br.name, p.Name, redelivery(rep))
			}
			peaks = append(peaks, rep.RedeliveryPeakPerS)
			t.Logf("%s, %s: redelivery peak %d/s at +%.0fs, connect peak %d/s, drain p50 %.3f s p99 %.3f s",
				br.name, p.Name, rep.RedeliveryPeakPerS, rep.RedeliveryPeakAtS, rep.PeakConnectsPerS, rep.DrainP50S, rep.DrainP99S)
		}
		if peaks[0] < 3*peaks[1] {
			t.Errorf("%s: the fixed timer's redelivery peak %d/s is not three times the jittered %d/s", br.name, peaks[0], peaks[1])
		}
	}
}

// slow skips a test of minutes unless STORMAUDIT_REPLAY_SLOW is 1.
func slow(t *testing.T) {
	if os.Getenv("STORMAUDIT_REPLAY_SLOW") != "1" {
		t.Skip("minutes of replays: set STORMAUDIT_REPLAY_SLOW=1")
	}
}

// TestRedeliveryScale replays 2,000 devices on a fixed timer with 100
// messages each queued while their link was down for 20 s (200,000
// redeliveries) against the embedded broker, as docs/replay.md measures
// it, and holds the counts together at that scale: whatever the loaded
// broker did, each device that came back drained its whole queue and
// each that did not lost it. It runs with STORMAUDIT_REPLAY_SLOW=1.
func TestRedeliveryScale(t *testing.T) {
	slow(t)
	defer TuneGC()()
	plan := wavePlans(t, 2000, 20*time.Second, 40*time.Second)[0]
	b := embedded(t, BrokerOptions{MaxQueued: 1000})
	start := time.Now()
	rep, err := Run(context.Background(), plan, Options{Broker: b.Addr(), Setup: b.Setup, Wills: b.Wills,
		Queue: &Queue{Messages: 100, QoS: 1}, LinkDown: &Outage{Down: 20 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v: %d devices, %d accepted, %d timed out, CONNACK p99 %.0f ms; %s; peak %d/s at +%.0fs, drain p50 %.2f s p99 %.2f s",
		time.Since(start).Round(time.Millisecond), rep.Devices, rep.ConnectsAccepted, rep.ConnectsTimedOut, rep.ConnackP99Ms,
		redelivery(rep), rep.RedeliveryPeakPerS, rep.RedeliveryPeakAtS, rep.DrainP50S, rep.DrainP99S)
	if n := rep.Recovered; rep.Published != 200000 || rep.Redelivered != 100*n || rep.Lost != 100*(2000-n) || rep.Drained != n || rep.Duplicates != 0 {
		t.Errorf("%d devices recovered: %s", n, redelivery(rep))
	}
}
