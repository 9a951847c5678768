package simulate

import (
	"bytes"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// TestLibraryReconnect checks the second owner: every device's records
// stay in time order and follow the reference client's timeline, the
// connects after the outage come on the library's un-jittered schedule
// (all at 1+2+4+8+16 s = 31 s under paho-python, plus a millisecond of
// latency per failed try: the first draw after the broker is back at 30 s), and the same seed gives the same bytes.
func TestLibraryReconnect(t *testing.T) {
	lib := preset(t, "paho-python")
	cfg := Config{Devices: 200, Outage: 30 * time.Second, Policy: preset(t, "full-jitter"), Seed: 3, Library: &lib, Latency: time.Millisecond}
	recs, st, a := run(t, cfg)
	if _, _, b := run(t, cfg); !bytes.Equal(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
	checkTimeOrder(t, recs)
	byDev := map[string][]*auditfmt.Record{}
	for i := range recs {
		byDev[recs[i].ClientID] = append(byDev[recs[i].ClientID], &recs[i])
	}
	atLib := 0
	for _, rs := range byDev {
		for _, r := range rs {
			if r.Outcome == auditfmt.Connected && at(r) >= 31_000_000 && at(r) < 31_100_000 {
				atLib++
				break
			}
		}
	}
	// the managers that drew their socket-open between 30 and 31 s
	// connected first; the rest connect when the library fires
	if atLib < 150 || st.LibraryAttempts < 5*200 {
		t.Errorf("%d of 200 devices connected at the library's 31 s; %d library socket-opens", atLib, st.LibraryAttempts)
	}
	if st.Recovered != 200 {
		t.Errorf("%d recovered", st.Recovered)
	}
}

// TestLibraryStaleSteps: a manager whose timer is far slower than the
// library's, through hundreds of flaps, must not act on a step queued
// before the library connected it (a regression: an 8-bit generation
// wrapped after 256 library connects and a stale step ran).
func TestLibraryStaleSteps(t *testing.T) {
	mgr, lib := window(t, 0), window(t, 0)
	mgr.Delay, mgr.BaseDelayS, mgr.MaxDelayS = "fixed", 512.5, 512.5
	lib.Delay, lib.BaseDelayS, lib.MaxDelayS = "fixed", 0.5, 0.5
	cfg := Config{Devices: 1, Outage: time.Second, Policy: mgr, Seed: 1, Library: &lib, Flaps: 700, FlapUp: time.Second, FlapDown: time.Second,
		Horizon: 1500 * time.Second}
	recs, st, _ := run(t, cfg)
	checkTimeOrder(t, recs)
	if st.Failed > 4 {
		t.Errorf("%d manager attempts failed; its 512.5 s timer allows about 2 in the run", st.Failed)
	}
}

// checkTimeOrder fails the test unless recorded_at never decreases.
func checkTimeOrder(t *testing.T, recs []auditfmt.Record) {
	t.Helper()
	for i := 1; i < len(recs); i++ {
		if recs[i].RecordedAt < recs[i-1].RecordedAt {
			t.Fatalf("record %d (%s %s) is before record %d", i+1, recs[i].ClientID, recs[i].Outcome, i)
		}
	}
}
