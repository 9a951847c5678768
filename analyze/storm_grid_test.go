package analyze

import (
	"fmt"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// stormFleet is one kind of fleet of the recovery-storm grid.
type stormFleet struct {
	name    string
	manager string // the policy of the manager that writes the records
	library string // the library's own reconnect loop beside it, "" for none
	tweak   func(*simulate.Config)
}

func stormFleets() []stormFleet {
	var fs []stormFleet
	managers := []string{"full-jitter", "equal-jitter", "decorrelated", "autopaho"}
	for _, m := range managers {
		for _, lib := range []string{"paho-python", "paho-go"} {
			fs = append(fs,
				stormFleet{name: m + "+" + lib, manager: m, library: lib},
				stormFleet{name: m + "+" + lib + "/short-outage", manager: m, library: lib, tweak: func(c *simulate.Config) { c.Outage = 14 * time.Second }},
				stormFleet{name: m + "+" + lib + "/flaps", manager: m, library: lib,
					tweak: func(c *simulate.Config) { c.Flaps, c.FlapUp, c.FlapDown = 2, 3*time.Second, 20*time.Second }})
		}
	}
	pathologies := []struct {
		name  string
		tweak func(*simulate.Config)
	}{
		{"plain", nil},
		{"short-outage", func(c *simulate.Config) { c.Outage = 14 * time.Second }},
		{"flaps", func(c *simulate.Config) { c.Flaps, c.FlapUp, c.FlapDown = 2, 3*time.Second, 20*time.Second }},
		{"bad-auth", func(c *simulate.Config) { c.BadAuth, c.Policy.AuthMinDelayS = 0.1, 30 }},
		{"hosts", func(c *simulate.Config) { c.DevicesPerHost, c.Policy.MinConnectSpacingS = 4, 0.25 }},
		{"capacity", func(c *simulate.Config) { c.Capacity = max(c.Devices/20, 2) }},
		{"tick-10ms", func(c *simulate.Config) { c.Tick = 10 * time.Millisecond }},
	}
	for _, m := range managers {
		for _, p := range pathologies {
			fs = append(fs, stormFleet{name: m + "/" + p.name, manager: m, tweak: p.tweak})
		}
	}
	return fs
}

func (g stormFleet) config(t testing.TB, size int, seed uint64) simulate.Config {
	cfg := simulate.Config{Devices: size, Outage: time.Minute, Policy: gridFleet{policy: g.manager}.resolve(t), Seed: seed}
	if g.library != "" {
		lib, err := policy.Preset(g.library)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Library = &lib
	}
	if g.tweak != nil {
		g.tweak(&cfg)
	}
	return cfg
}

// TestStormGrid validates recovery-storm and unscheduled-connect on
// simulated fleets: jittered managers (full, equal and decorrelated
// jitter, autopaho) with the MQTT library's own un-jittered reconnect
// beside them (paho-python, paho-go) must be flagged by both; the same
// managers alone, through outages long and short, flaps, bad credentials,
// gateways, a broker capacity and a timer tick, by neither. Fleets of 50,
// 200 and 2000 devices, several seeds. It prints the confusion matrices.
func TestStormGrid(t *testing.T) {
	type run struct {
		size  int
		seeds []uint64
	}
	runs := []run{{50, []uint64{1, 2, 3}}, {200, []uint64{1, 2}}, {2000, []uint64{1}}}
	if testing.Short() {
		runs = []run{{50, []uint64{1}}, {200, []uint64{1}}}
	}
	var storm, unsched [4]int // flagged storm fleet, missed, flagged quiet fleet, quiet
	var wrong []string
	tally := func(m *[4]int, want, got bool) {
		switch {
		case want && got:
			m[0]++
		case want:
			m[1]++
		case got:
			m[2]++
		default:
			m[3]++
		}
	}
	for _, g := range stormFleets() {
		for _, r := range runs {
			for _, seed := range r.seeds {
				cfg := g.config(t, r.size, seed)
				res := checkSimulated(t, cfg, &cfg.Policy)
				want := g.library != ""
				gotStorm, gotUnsched := len(of(res, recoveryStormID)) > 0, len(of(res, unscheduledConnectID)) > 0
				tally(&storm, want, gotStorm)
				tally(&unsched, want, gotUnsched)
				if gotStorm != want || gotUnsched != want {
					wrong = append(wrong, fmt.Sprintf("%s, %d devices, seed %d: recovery-storm %v, unscheduled-connect %v, want %v%s",
						g.name, r.size, seed, gotStorm, gotUnsched, want, describe(append(of(res, recoveryStormID), first(of(res, unscheduledConnectID))...))))
				}
			}
		}
	}
	for _, m := range []struct {
		rule string
		n    [4]int
	}{{recoveryStormID, storm}, {unscheduledConnectID, unsched}} {
		t.Logf("%s confusion matrix over %d simulated fleets:\n"+
			"                                 flagged   not flagged\n"+
			"  with a library reconnect loop  %7d   %11d\n"+
			"  manager alone                  %7d   %11d", m.rule, m.n[0]+m.n[1]+m.n[2]+m.n[3], m.n[0], m.n[1], m.n[2], m.n[3])
	}
	for _, w := range wrong {
		t.Error(w)
	}
}

// first returns the first of fs, if any.
func first(fs []Finding) []Finding { return fs[:min(1, len(fs))] }

// TestStormInferred checks recovery-storm with the policy inferred from
// the log, on a fleet of each manager with and without a library loop.
func TestStormInferred(t *testing.T) {
	for _, g := range stormFleets() {
		if g.tweak != nil {
			continue
		}
		cfg := g.config(t, 200, 5)
		res := checkSimulated(t, cfg, nil)
		if got, want := len(of(res, recoveryStormID)) > 0, g.library != ""; got != want {
			t.Errorf("%s with the policy inferred (%+v): flagged %v, want %v%s", g.name, res.Summary.Policy.Policy, got, want, describe(of(res, recoveryStormID)))
		}
	}
}
