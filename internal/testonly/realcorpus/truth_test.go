package realcorpus

import (
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
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

// at parses a broker.log stamp.
func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(StampTime, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestParseBrokerLogTwice: two kills. Each outage loses the clients the
// broker had connected at its mark; a reconnect counts for the outage it
// follows only until the next one begins; a connect the next kill cut
// within Kept still served the client (it did not close it).
func TestParseBrokerLogTwice(t *testing.T) {
	log := `2026-12-01T15:00:01.000000Z 1: New client connected from 127.0.0.1:1 as a (p2, c0, k30).
2026-12-01T15:00:01.100000Z 1: New client connected from 127.0.0.1:2 as b (p2, c0, k30).
2026-12-01T15:00:01.200000Z 1: New client connected from 127.0.0.1:3 as c (p2, c0, k30).
2026-12-01T15:00:01.300000Z 1: New client connected from 127.0.0.1:4 as d (p2, c0, k30).
2026-12-01T15:00:05.000000Z 1: Client d disconnected.
2026-12-01T15:00:10.000000Z corpus: SIGKILL sent to the broker
2026-12-01T15:00:25.000000Z corpus: restarting the broker
2026-12-01T15:00:25.010000Z 2: mosquitto version 2.0.11 starting
2026-12-01T15:00:25.020000Z 2: mosquitto version 2.0.11 running
2026-12-01T15:00:26.000000Z 2: New client connected from 127.0.0.1:5 as a (p2, c0, k30).
2026-12-01T15:00:27.000000Z 2: New client connected from 127.0.0.1:6 as b (p2, c0, k30).
2026-12-01T15:00:27.100000Z 2: Socket error on client b, disconnecting.
2026-12-01T15:00:36.800000Z 2: New client connected from 127.0.0.1:7 as c (p2, c0, k30).
2026-12-01T15:00:37.000000Z corpus: SIGKILL sent to the broker
2026-12-01T15:00:52.000000Z corpus: restarting the broker
2026-12-01T15:00:52.020000Z 3: mosquitto version 2.0.11 running
2026-12-01T15:00:53.000000Z 3: New client connected from 127.0.0.1:8 as b (p2, c0, k30).
2026-12-01T15:00:54.000000Z 3: New client connected from 127.0.0.1:9 as a (p2, c0, k30).
2026-12-01T15:00:54.200000Z 3: Client a already connected, closing old connection.
2026-12-01T15:00:54.200000Z 3: New client connected from 127.0.0.1:10 as a (p2, c0, k30).
2026-12-01T15:00:56.000000Z 3: New client connected from 127.0.0.1:11 as c (p2, c0, k30).
2026-12-01T15:01:30.000000Z corpus: stopping the fleet
`
	tr, err := ParseBrokerLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Outages) != 2 {
		t.Fatalf("%d outages, want 2", len(tr.Outages))
	}
	o1, o2 := tr.Outages[0], tr.Outages[1]
	if o1.Kind != Kill || !o1.Start.Equal(at(t, "2026-12-01T15:00:10.000000Z")) || !o1.Back.Equal(at(t, "2026-12-01T15:00:25.020000Z")) {
		t.Errorf("first outage %s from %v to %v", o1.Kind, o1.Start, o1.Back)
	}
	// d disconnected before the kill: not lost in it (though Lost, the
	// clients seen before the first outage, counts it)
	if !slices.Equal(o1.Lost, []string{"a", "b", "c"}) || tr.Lost != 4 {
		t.Errorf("first outage lost %v (Lost %d)", o1.Lost, tr.Lost)
	}
	// b tore its reconnect down at once and was not back before the second
	// kill; c's reconnect was cut by the kill 200 ms later but served it
	want1 := map[string]time.Time{"a": at(t, "2026-12-01T15:00:26.000000Z"), "c": at(t, "2026-12-01T15:00:36.800000Z")}
	if !maps.EqualFunc(o1.Reconnected, want1, time.Time.Equal) {
		t.Errorf("first outage reconnected %v, want %v", o1.Reconnected, want1)
	}
	if !maps.EqualFunc(tr.Reconnected, want1, time.Time.Equal) || !tr.Died.Equal(o1.Start) || !tr.Back.Equal(o1.Back) {
		t.Errorf("the top-level fields are not the first outage's: died %v back %v reconnected %v", tr.Died, tr.Back, tr.Reconnected)
	}
	if !slices.Equal(o2.Lost, []string{"a", "c"}) || !o2.Back.Equal(at(t, "2026-12-01T15:00:52.020000Z")) {
		t.Errorf("second outage lost %v, back %v", o2.Lost, o2.Back)
	}
	// a's first connect after the second restart was taken over at once
	// (a connected again over it): its second one is its reconnect; b was
	// not connected at the second kill
	want2 := map[string]time.Time{"a": at(t, "2026-12-01T15:00:54.200000Z"), "c": at(t, "2026-12-01T15:00:56.000000Z")}
	if !maps.EqualFunc(o2.Reconnected, want2, time.Time.Equal) {
		t.Errorf("second outage reconnected %v, want %v", o2.Reconnected, want2)
	}
	if ttr := o2.TTR(); len(ttr) != 2 || ttr[0] != 17200*time.Millisecond || ttr[1] != 19*time.Second {
		t.Errorf("second outage TTR %v", ttr)
	}
	// Connects: every connect after the first restart
	if len(tr.Connects) != 7 || tr.PerClient["a"] != 3 || tr.PerClientAll["a"] != 4 || tr.PerClientAll["d"] != 1 {
		t.Errorf("%d connects, per client %v, all %v", len(tr.Connects), tr.PerClient, tr.PerClientAll)
	}
	// b, lost in the first outage and not back before the second, came
	// back at last after it
	if got := tr.ConnectsBy["b"]; len(got) != 3 || !got[2].Equal(at(t, "2026-12-01T15:00:53.000000Z")) {
		t.Errorf("b's connects %v", got)
	}
}

// TestParseBrokerLogFreeze: a silent outage. The broker stays up through
// it and times the sessions out; the outage ends at the restore mark.
func TestParseBrokerLogFreeze(t *testing.T) {
	log := `2026-12-01T15:00:01.000000Z 1: mosquitto version 2.0.11 running
2026-12-01T15:00:02.000000Z 1: New client connected from 127.0.0.1:1 as a (p2, c0, k20).
2026-12-01T15:00:03.000000Z 1: New client connected from 127.0.0.1:2 as b (p2, c0, k20).
2026-12-01T15:00:04.000000Z 1: New client connected from 127.0.0.1:3 as c (p2, c0, k20).
2026-12-01T15:00:40.000000Z corpus: link frozen
2026-12-01T15:00:52.500000Z 1: Client a has exceeded timeout, disconnecting.
2026-12-01T15:01:05.000000Z 1: Client b has exceeded timeout, disconnecting.
2026-12-01T15:01:40.000000Z corpus: link restored
2026-12-01T15:01:40.001000Z 1: Socket error on client c, disconnecting.
2026-12-01T15:01:41.000000Z 1: New client connected from 127.0.0.1:4 as b (p2, c0, k20).
2026-12-01T15:01:43.000000Z 1: New client connected from 127.0.0.1:5 as a (p2, c0, k20).
2026-12-01T15:02:40.000000Z corpus: stopping the fleet
`
	tr, err := ParseBrokerLog(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Outages) != 1 {
		t.Fatalf("%d outages, want 1", len(tr.Outages))
	}
	o := tr.Outages[0]
	if o.Kind != Freeze || !o.Start.Equal(at(t, "2026-12-01T15:00:40.000000Z")) || !o.Back.Equal(at(t, "2026-12-01T15:01:40.000000Z")) {
		t.Errorf("outage %s from %v to %v", o.Kind, o.Start, o.Back)
	}
	if !slices.Equal(o.Lost, []string{"a", "b", "c"}) || len(o.Reconnected) != 2 || !o.Reconnected["a"].Equal(at(t, "2026-12-01T15:01:43.000000Z")) {
		t.Errorf("lost %v, reconnected %v", o.Lost, o.Reconnected)
	}
	want := []Timeout{{At: at(t, "2026-12-01T15:00:52.500000Z"), Client: "a"}, {At: at(t, "2026-12-01T15:01:05.000000Z"), Client: "b"}}
	if !slices.EqualFunc(tr.Timeouts, want, func(x, y Timeout) bool { return x.At.Equal(y.At) && x.Client == y.Client }) {
		t.Errorf("timeouts %v, want %v", tr.Timeouts, want)
	}
}

func TestParseBrokerLogMalformed(t *testing.T) {
	for name, log := range map[string]string{
		"no outage":  "2026-12-01T15:00:01.000000Z 1: New client connected from 127.0.0.1:1 as a (p2, c0, k20).\n",
		"never back": "2026-12-01T15:00:01.000000Z corpus: SIGKILL sent to the broker\n",
		"kill during a kill": "2026-12-01T15:00:01.000000Z corpus: SIGKILL sent to the broker\n" +
			"2026-12-01T15:00:02.000000Z corpus: SIGKILL sent to the broker\n",
		"never restored": "2026-12-01T15:00:01.000000Z corpus: link frozen\n" +
			"2026-12-01T15:00:02.000000Z 1: mosquitto version 2.0.11 running\n",
		"bad stamp": "2026-12-01 corpus: link frozen\n",
	} {
		if _, err := ParseBrokerLog(strings.NewReader(log)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestRecordedBrokerLogs reads the broker.log of each recorded scenario
// and holds it to what the scenario intends: its outages, in their kinds
// and lengths; lost clients and reconnects that make sense; keepalive
// timeouts through a silent outage; churn; the clock offsets meta.json
// records.
func TestRecordedBrokerLogs(t *testing.T) {
	const corpus = "../../testdata/realclients"
	dirs, _ := filepath.Glob(filepath.Join(corpus, "*", BrokerLog))
	if len(dirs) == 0 {
		t.Skip("no recorded corpus in", corpus)
	}
	byName := map[string]Scenario{}
	for _, sc := range Scenarios {
		byName[sc.Name] = sc
	}
	for _, blog := range dirs {
		dir := filepath.Dir(blog)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			f, err := os.Open(blog)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := ParseBrokerLog(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			var meta Meta
			raw, err := os.ReadFile(filepath.Join(dir, MetaFile))
			if err == nil {
				err = json.Unmarshal(raw, &meta)
			}
			if err != nil {
				t.Fatal(err)
			}
			outages := meta.Outages
			if len(outages) == 0 { // recorded before meta.json had them
				outages = []MetaOutage{{Kind: Kill, DownS: meta.DownS}}
			}
			if len(tr.Outages) != len(outages) {
				t.Fatalf("%d outages in the broker's log, meta.json says %d", len(tr.Outages), len(outages))
			}
			if !tr.Died.Equal(tr.Outages[0].Start) || !tr.Back.Equal(tr.Outages[0].Back) || tr.Stopped.IsZero() {
				t.Errorf("died %v, back %v, stopped %v", tr.Died, tr.Back, tr.Stopped)
			}
			if tr.Lost == 0 || tr.Lost > meta.Devices || len(tr.Reconnected) > tr.Lost {
				t.Errorf("%d of %d devices lost, %d reconnected", tr.Lost, meta.Devices, len(tr.Reconnected))
			}
			for i, o := range tr.Outages {
				down := o.Back.Sub(o.Start)
				if want := time.Duration(outages[i].DownS * 1e9); o.Kind != outages[i].Kind || down < want || down > want+5*time.Second {
					t.Errorf("outage %d: %s for %v, meta.json says %s for %v", i, o.Kind, down, outages[i].Kind, want)
				}
				end := tr.Stopped
				if i+1 < len(tr.Outages) {
					end = tr.Outages[i+1].Start
				}
				if len(o.Lost) == 0 || len(o.Reconnected) == 0 {
					t.Errorf("outage %d: %d lost, %d reconnected", i, len(o.Lost), len(o.Reconnected))
				}
				for id, at := range o.Reconnected {
					if !o.lost(id) || at.Before(o.Back) || !at.Before(end) {
						t.Errorf("outage %d: %s reconnected at %v, lost %v, back %v, next %v", i, id, at, o.lost(id), o.Back, end)
					}
				}
				ttr := o.TTR()
				t.Logf("outage %d: %s at %s, %v, %d lost, %d back before the next, TTR p50 %v max %v", i, o.Kind,
					o.Start.Format(StampTime), down, len(o.Lost), len(o.Reconnected), Rank(ttr, 0.5), Rank(ttr, 1))
				if o.Kind != Freeze {
					continue
				}
				// the broker times each session out 1.5 keepalives after the
				// client's last packet, which came before the freeze
				k := time.Duration(meta.KeepaliveS) * time.Second
				n := 0
				for _, to := range tr.Timeouts {
					if to.At.After(o.Start) && to.At.Before(o.Back) {
						n++
						if d := to.At.Sub(o.Start); !o.lost(to.Client) || d > 3*k/2+3*time.Second {
							t.Errorf("outage %d: %s timed out %v after the freeze", i, to.Client, d)
						}
					}
				}
				if n < len(o.Lost)*9/10 {
					t.Errorf("outage %d: the broker timed out %d of the %d sessions it held", i, n, len(o.Lost))
				}
			}
			if meta.Mode == "churn" {
				for id, n := range tr.PerClientAll {
					if n < 10 {
						t.Errorf("%s connected %d times: no churn", id, n)
					}
				}
			}
			if sc, ok := byName[meta.Scenario]; ok && sc.Skew.Fraction > 0 {
				n := len(meta.ClockOffsetsS)
				if want := sc.Skew.Fraction * float64(meta.Devices); math.Abs(float64(n)-want) > want/2 {
					t.Errorf("%d devices with their clocks off, want about %.0f", n, want)
				}
				for id, off := range meta.ClockOffsetsS {
					if off != sc.Skew.Offset.Seconds() {
						t.Errorf("%s: clock %gs off, want %v", id, off, sc.Skew.Offset)
					}
				}
			}
		})
	}
}
