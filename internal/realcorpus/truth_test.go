package realcorpus

import (
	"strings"
	"testing"
	"time"
)

const sampleLog = `2026-12-01T15:01:02.296147Z 1796137262: New client connected from 127.0.0.1:55069 as a (p2, c0, k30).
2026-12-01T15:01:02.429306Z 1796137262: New client connected from 127.0.0.1:40747 as b (p2, c0, k30).
2026-12-01T15:01:07.500000Z corpus: SIGKILL sent to the broker
2026-12-01T15:01:21.559227Z corpus: restarting the broker
2026-12-01T15:01:21.570609Z 1796137281: mosquitto version 2.0.11 starting
2026-12-01T15:01:21.570663Z 1796137281: mosquitto version 2.0.11 running
2026-12-01T15:01:22.500000Z 1796137282: New client connected from 127.0.0.1:42587 as b (p2, c0, k30).
2026-12-01T15:01:22.900000Z 1796137282: New client connected from 127.0.0.1:42588 as c (p2, c0, k30).
2026-12-01T15:01:23.400000Z 1796137282: New client connected from 127.0.0.1:42589 as a (p2, c0, k30).
2026-12-01T15:01:30.000000Z 1796137282: New client connected from 127.0.0.1:42590 as a (p2, c0, k30).
2026-12-01T15:01:40.000000Z corpus: stopping the fleet
2026-12-01T15:01:41.000000Z 1796137282: New client connected from 127.0.0.1:42591 as a (p2, c0, k30).
`

func TestParseBrokerLog(t *testing.T) {
	tr, err := ParseBrokerLog(strings.NewReader(sampleLog))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		v, err := time.Parse(StampTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if !tr.Died.Equal(at("2026-12-01T15:01:07.500000Z")) || !tr.Back.Equal(at("2026-12-01T15:01:21.570663Z")) || tr.Lost != 2 {
		t.Errorf("died %v, back %v, lost %d", tr.Died, tr.Back, tr.Lost)
	}
	// c was not connected before the broker died: not a reconnect
	if len(tr.Reconnected) != 2 || !tr.Reconnected["a"].Equal(at("2026-12-01T15:01:23.400000Z")) {
		t.Errorf("reconnected %v", tr.Reconnected)
	}
	if ttr := tr.TTR(); len(ttr) != 2 || ttr[0] != 15*time.Second || ttr[1] != 15900*time.Millisecond {
		t.Errorf("TTR = %v", ttr)
	}
	if len(tr.Connects) != 4 || tr.PerClient["a"] != 2 {
		t.Errorf("connects %v, per client %v (the one after the stop mark is not counted)", tr.Connects, tr.PerClient)
	}
	if n, from := tr.PeakPerSecond(); n != 3 || !from.Equal(at("2026-12-01T15:01:22.500000Z")) {
		t.Errorf("peak %d from %v, want 3 from 15:01:22.5", n, from)
	}
	if _, err := ParseBrokerLog(strings.NewReader("bad\n")); err == nil {
		t.Error("a line without a stamp was accepted")
	}
}

// TestParseBrokerLogTornDown: a connect the client itself closed at once
// (two reconnect owners racing) is not its reconnect; the next one is.
func TestParseBrokerLogTornDown(t *testing.T) {
	log := `2026-12-01T15:13:57.330517Z 1: New client connected from 127.0.0.1:56499 as x (p2, c0, k30).
2026-12-01T15:14:00.000000Z corpus: SIGKILL sent to the broker
2026-12-01T15:14:10.000000Z 2: mosquitto version 2.0.11 running
2026-12-01T15:14:17.712326Z 2: New client connected from 127.0.0.1:53005 as x (p2, c0, k30).
2026-12-01T15:14:17.715377Z 2: Client x closed its connection.
2026-12-01T15:14:33.718266Z 2: New client connected from 127.0.0.1:34805 as x (p2, c0, k30).
`
	tr, err := ParseBrokerLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 12, 1, 15, 14, 33, 718266000, time.UTC); !tr.Reconnected["x"].Equal(want) {
		t.Errorf("x reconnected at %v, want %v", tr.Reconnected["x"], want)
	}
	if len(tr.Connects) != 2 || tr.PerClient["x"] != 2 {
		t.Errorf("connects %v: the broker accepted both", tr.Connects)
	}
}
