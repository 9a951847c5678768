package replay

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// t0 is the loss of planSchedule's incident, Unix ns.
const t0 = int64(1_796_048_250_000_000_000) // 2026-11-30T14:17:30Z

// planSchedule is three devices that lose the broker at t0: dev-a's
// socket-open before the incident is not replayed; the broker is back at
// +10 s, dev-a's second open, the first that connected.
func planSchedule() *analyze.FleetSchedule {
	s := int64(time.Second)
	return &analyze.FleetSchedule{
		Devices: []analyze.ScheduledDevice{{ID: "dev-a", Clean: true}, {ID: "dev-b"}, {ID: "dev-c"}},
		Opens: []analyze.ScheduledOpen{
			{At: t0 - 10*s, Wait: s, Device: 0},
			{At: t0 + 5*s, Wait: 5 * s, Device: 1},
			{At: t0 + 5*s, Wait: 5 * s, Device: 2},
			{At: t0 + 10*s, Wait: 5 * s, Device: 0, Attempt: 1},
			{At: t0 + 12*s, Wait: 7 * s, Device: 2, Attempt: 1},
			{At: t0 + 20*s, Wait: 15 * s, Device: 1, Attempt: 1},
		},
		Incidents: []analyze.Incident{{LostAt: t0}},
		Accepted:  []int64{t0 - 10*s, t0 + 10*s, t0 + 12*s, t0 + 20*s},
	}
}

func preset(t *testing.T, name string) *policy.Policy {
	t.Helper()
	p, err := policy.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return &p
}

// TestPlansRecorded: the recorded plan starts at the incident's loss, or
// at From, with the devices in the order of their first connect, and the
// outage is the time to the first open that connected, less the margin,
// only when the plans start at an incident.
func TestPlansRecorded(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name       string
		fs         func(*analyze.FleetSchedule)
		o          PlanOptions
		devices    []Device
		connects   []Connect
		wantOutage time.Duration
	}{{
		name:    "the incident",
		o:       PlanOptions{Keepalive: 45},
		devices: []Device{{ID: "dev-b", Keepalive: 45}, {ID: "dev-c", Keepalive: 45}, {ID: "dev-a", Clean: true, Keepalive: 45}},
		connects: []Connect{{At: 5 * s, Wait: 5 * s, Device: 0}, {At: 5 * s, Wait: 5 * s, Device: 1},
			{At: 10 * s, Wait: 5 * s, Device: 2, Attempt: 1}, {At: 12 * s, Wait: 7 * s, Device: 1, Attempt: 1},
			{At: 20 * s, Wait: 15 * s, Device: 0, Attempt: 1}},
		wantOutage: 10*s - 50*time.Millisecond,
	}, {
		name:    "from before the incident",
		o:       PlanOptions{From: time.Unix(0, t0-20*int64(s)), Keepalive: 45},
		devices: []Device{{ID: "dev-a", Clean: true, Keepalive: 45}, {ID: "dev-b", Keepalive: 45}, {ID: "dev-c", Keepalive: 45}},
		// an incident comes after From: the outage runs from From to the
		// first open after it that connected, dev-a's at -10 s
		wantOutage: 10*s - 50*time.Millisecond,
	}, {
		name:     "from after the incident",
		o:        PlanOptions{From: time.Unix(0, t0+11*int64(s))},
		devices:  []Device{{ID: "dev-c"}, {ID: "dev-b"}},
		connects: []Connect{{At: s, Wait: 7 * s, Device: 0, Attempt: 1}, {At: 9 * s, Wait: 15 * s, Device: 1, Attempt: 1}},
	}, {
		name:    "no incident: the first open",
		fs:      func(fs *analyze.FleetSchedule) { fs.Incidents = nil },
		devices: []Device{{ID: "dev-a", Clean: true}, {ID: "dev-b"}, {ID: "dev-c"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fs := planSchedule()
			if tc.fs != nil {
				tc.fs(fs)
			}
			plans, outage, err := Plans(context.Background(), fs, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(plans) != 1 || plans[0].Name != "recorded" {
				t.Fatalf("got %d plans (%v), want the recorded one", len(plans), plans)
			}
			if got := plans[0].Devices; !reflect.DeepEqual(got, tc.devices) {
				t.Errorf("devices: got %+v, want %+v", got, tc.devices)
			}
			if got := plans[0].Connects; tc.connects != nil && !reflect.DeepEqual(got, tc.connects) {
				t.Errorf("connects: got %+v, want %+v", got, tc.connects)
			}
			if outage != tc.wantOutage {
				t.Errorf("outage: got %v, want %v", outage, tc.wantOutage)
			}
		})
	}
}

// TestPlansWhatIf: with a policy, the what-if is the recorded plan's
// devices (the sample's, with Devices) under it, with its keepalive,
// drawn the same for the same seed; Compare plays the recorded plan
// first.
func TestPlansWhatIf(t *testing.T) {
	fixed := preset(t, "fixed")
	for _, tc := range []struct {
		name  string
		o     PlanOptions
		names []string
		n     int
	}{
		{"what-if", PlanOptions{Policy: fixed, Seed: 1}, []string{"what-if (fixed)"}, 3},
		{"compare", PlanOptions{Policy: fixed, Seed: 1, Compare: true}, []string{"recorded", "what-if (fixed)"}, 3},
		{"library", PlanOptions{Policy: fixed, Library: preset(t, "paho-python"), Seed: 1}, []string{"what-if (fixed)"}, 3},
		{"sample", PlanOptions{Policy: fixed, Seed: 1, Devices: 2, Compare: true}, []string{"recorded", "what-if (fixed)"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plans, outage, err := Plans(context.Background(), planSchedule(), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range plans {
				names = append(names, p.Name)
			}
			if !reflect.DeepEqual(names, tc.names) {
				t.Fatalf("plans: got %q, want %q", names, tc.names)
			}
			if want := 10*time.Second - 50*time.Millisecond; outage != want {
				t.Errorf("outage: got %v, want %v", outage, want)
			}
			w := plans[len(plans)-1]
			if len(w.Devices) != tc.n {
				t.Fatalf("the what-if has %d devices, want %d", len(w.Devices), tc.n)
			}
			if tc.o.Compare {
				for i, d := range plans[0].Devices {
					if w.Devices[i].ID != d.ID || w.Devices[i].Clean != d.Clean {
						t.Errorf("what-if device %d is %+v, recorded %+v", i, w.Devices[i], d)
					}
				}
			}
			seen := map[int32]bool{}
			for i, c := range w.Connects {
				if i > 0 && c.At < w.Connects[i-1].At {
					t.Fatalf("connect %d at %v before connect %d at %v", i, c.At, i-1, w.Connects[i-1].At)
				}
				seen[c.Device] = true
			}
			for k, d := range w.Devices {
				if d.Keepalive != uint16(fixed.KeepaliveS) {
					t.Errorf("%s: keepalive %d, want the policy's %v", d.ID, d.Keepalive, fixed.KeepaliveS)
				}
				if !seen[int32(k)] {
					t.Errorf("%s: no connect in the what-if", d.ID)
				}
			}
			again, _, err := Plans(context.Background(), planSchedule(), tc.o)
			if err != nil || !reflect.DeepEqual(again, plans) {
				t.Errorf("the same options drew other plans (%v)", err)
			}
		})
	}
}

// TestPlansErrors: what Plans refuses, and the typed error of a start
// after the last open.
func TestPlansErrors(t *testing.T) {
	late := time.Unix(0, t0+time.Hour.Nanoseconds())
	_, _, err := Plans(context.Background(), planSchedule(), PlanOptions{From: late})
	var noOpen *NoOpenError
	if !errors.As(err, &noOpen) || noOpen.From != late.UnixNano() {
		t.Errorf("from after the last open: got %v, want a NoOpenError", err)
	} else if want := "no socket-open at or after 2026-11-30T15:17:30Z"; err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
	for _, tc := range []struct {
		name string
		fs   *analyze.FleetSchedule
		o    PlanOptions
		want string
	}{
		{"no open", &analyze.FleetSchedule{}, PlanOptions{}, "no socket-open to replay"},
		{"compare without a policy", planSchedule(), PlanOptions{Compare: true}, "need the what-if's policy"},
		{"library without a policy", planSchedule(), PlanOptions{Library: preset(t, "paho-python")}, "need the what-if's policy"},
	} {
		if _, _, err := Plans(context.Background(), tc.fs, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}

// TestSimulateWhatIf: every run is the fleet with only its policy
// replaced, in the policies' order; without a run function the figures
// are simulate.Run's; a run's error ends it as it came, and an invalid
// fleet is refused before any run.
func TestSimulateWhatIf(t *testing.T) {
	ctx := context.Background()
	fleet := simulate.Config{Devices: 50, Outage: 10 * time.Second, Seed: 3, Capacity: 10}
	pols := []policy.Policy{*preset(t, "fixed"), *preset(t, "full-jitter")}
	w, err := SimulateWhatIf(ctx, fleet, pols, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(w.Fleet, fleet) || len(w.Runs) != 2 || w.Runs[0].Policy != "fixed" || w.Runs[1].Policy != "full-jitter" {
		t.Fatalf("got %+v, want the fleet and a run of fixed, then full-jitter", w)
	}
	for i, r := range w.Runs {
		cfg := fleet
		cfg.Policy = pols[i]
		want, err := simulate.Run(ctx, cfg, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stats != want {
			t.Errorf("%s: got %+v, want simulate.Run's %+v", r.Policy, r.Stats, want)
		}
	}

	var got []simulate.Config
	boom := errors.New("boom")
	_, err = SimulateWhatIf(ctx, fleet, pols, func(i int, cfg simulate.Config) (simulate.Stats, error) {
		if i != len(got) {
			t.Errorf("run %d called as run %d", len(got), i)
		}
		got = append(got, cfg)
		return simulate.Stats{}, boom
	})
	if err != boom {
		t.Errorf("a run's error: got %v, want it as it came", err)
	}
	want := fleet
	want.Policy = pols[0]
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("got runs of %+v, want one, of %+v", got, want)
	}

	bad := fleet
	bad.Devices = 0
	if _, err := SimulateWhatIf(ctx, bad, pols, func(int, simulate.Config) (simulate.Stats, error) {
		t.Error("a run of an invalid fleet")
		return simulate.Stats{}, nil
	}); err == nil {
		t.Error("an invalid fleet: no error")
	}
	if _, err := SimulateWhatIf(ctx, fleet, nil, nil); err == nil {
		t.Error("no policy: no error")
	}
}

// TestWhy: the sentences that explain a what-if's figures, on stormaudit
// demo's (2,000 devices, a 1 min outage, 100 connects/s), and none where
// nothing seems to contradict.
func TestWhy(t *testing.T) {
	fixed := simulate.Stats{PeakUpPerS: 2000, PeakPerS: 2000, PeakAt: 5 * time.Second, RefusedOverload: 19000, TTR99: 156550 * time.Millisecond}
	jitter := simulate.Stats{PeakUpPerS: 48, PeakPerS: 2456, PeakAt: 0, TTR99: 169946 * time.Millisecond}
	for _, tc := range []struct {
		name string
		runs []PolicyRun
		want []string
	}{{
		name: "the demo's",
		runs: []PolicyRun{{"fixed", fixed}, {"full-jitter", jitter}},
		want: []string{
			"full-jitter: its busiest second came 0s after the drop, while the broker was down: every device's first retries, which nothing answered; the broker itself saw at most 48 a second.",
			"full-jitter: its p99 time to recover is 13.396s longer than fixed's: each device waits out a random draw, up to the cap, instead of all at once; the price of 1952 fewer socket-opens a second on the broker's return and 19000 fewer refused over capacity.",
		},
	}, {
		name: "gentler and faster",
		runs: []PolicyRun{{"fixed", fixed}, {"better", simulate.Stats{PeakUpPerS: 48, PeakPerS: 48, PeakAt: time.Minute, TTR99: time.Minute}}},
	}, {
		name: "one run",
		runs: []PolicyRun{{"fixed", fixed}},
	}} {
		w := &SimulatedWhatIf{Fleet: simulate.Config{Devices: 2000, Outage: time.Minute, Capacity: 100}, Runs: tc.runs}
		if got := w.Why(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
