package analyze

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// gridFleet is one kind of fleet of the resync grid.
type gridFleet struct {
	name   string
	policy string // a preset name or TOML text
	lock   bool   // whether the fleet moves in lockstep: resync must flag it
	tweak  func(*simulate.Config)
}

var gridPolicies = map[string]string{
	"equal-jitter": `delay = "equal_jitter"
base_delay_s = 1.0
max_delay_s = 120.0
multiplier = 2.0`,
	"decorrelated": `delay = "decorrelated_jitter"
base_delay_s = 1.0
max_delay_s = 120.0`,
}

func gridFleets() []gridFleet {
	fs := []gridFleet{
		{name: "fixed", policy: "fixed", lock: true},
		{name: "exponential", policy: "exponential", lock: true},
		{name: "paho-go", policy: "paho-go", lock: true},
		{name: "paho-python", policy: "paho-python", lock: true},
		{name: "full-jitter/copied-seed", policy: "full-jitter", lock: true, tweak: func(c *simulate.Config) { c.SameSeed = true }},
		{name: "decorrelated/copied-seed", policy: "decorrelated", lock: true, tweak: func(c *simulate.Config) { c.SameSeed = true }},
		{name: "full-jitter/tick-1s", policy: "full-jitter", lock: true, tweak: func(c *simulate.Config) { c.Tick = time.Second }},
		{name: "equal-jitter/tick-2s", policy: "equal-jitter", lock: true, tweak: func(c *simulate.Config) { c.Tick = 2 * time.Second }},
	}
	pathologies := []struct {
		name  string
		tweak func(*simulate.Config)
	}{
		{"plain", nil},
		{"flaps", func(c *simulate.Config) { c.Flaps, c.FlapUp, c.FlapDown = 2, 3*time.Second, 20*time.Second }},
		{"bad-auth", func(c *simulate.Config) { c.BadAuth, c.Policy.AuthMinDelayS = 0.1, 30 }},
		{"hosts", func(c *simulate.Config) { c.DevicesPerHost, c.Policy.MinConnectSpacingS = 4, 0.25 }},
		{"capacity", func(c *simulate.Config) { c.Capacity = max(c.Devices/20, 2) }},
		{"tick-10ms", func(c *simulate.Config) { c.Tick = 10 * time.Millisecond }},
	}
	for _, p := range []string{"full-jitter", "equal-jitter", "decorrelated", "autopaho"} {
		for _, path := range pathologies {
			fs = append(fs, gridFleet{name: p + "/" + path.name, policy: p, tweak: path.tweak})
		}
	}
	return fs
}

func (g gridFleet) resolve(t testing.TB) policy.Policy {
	if text, ok := gridPolicies[g.policy]; ok {
		p, err := policy.Parse(g.policy+".toml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p, err := policy.Preset(g.policy)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestResyncGrid validates resync on simulated fleets: every delay rule
// and pathology of simulate, fleets of 50, 200 and 2000 devices, several
// seeds. Fixed, un-jittered, copied-seed and coarsely quantised fleets
// must be flagged; full, equal and decorrelated jitter (and autopaho's
// jittered backoff) must not, whatever else goes wrong in the outage. It
// prints the confusion matrix.
func TestResyncGrid(t *testing.T) {
	type run struct {
		size  int
		seeds []uint64
	}
	runs := []run{{50, []uint64{1, 2, 3}}, {200, []uint64{1, 2}}, {2000, []uint64{1}}}
	if testing.Short() {
		runs = []run{{50, []uint64{1}}, {200, []uint64{1}}}
	}
	var tp, fn, fp, tn int
	var wrong []string
	for _, g := range gridFleets() {
		for _, r := range runs {
			for _, seed := range r.seeds {
				cfg := simulate.Config{Devices: r.size, Outage: time.Minute, Policy: g.resolve(t), Seed: seed}
				if g.tweak != nil {
					g.tweak(&cfg)
				}
				res := checkSimulated(t, cfg, &cfg.Policy)
				flagged := len(of(res, "resync")) > 0
				switch {
				case g.lock && flagged:
					tp++
				case g.lock:
					fn++
				case flagged:
					fp++
				default:
					tn++
				}
				if flagged != g.lock {
					wrong = append(wrong, fmt.Sprintf("%s, %d devices, seed %d: flagged %v, want %v%s", g.name, r.size, seed, flagged, g.lock, describe(of(res, "resync"))))
				}
			}
		}
	}
	t.Logf("resync confusion matrix over %d simulated fleets:\n"+
		"                      flagged   not flagged\n"+
		"  lockstep fleets     %7d   %11d\n"+
		"  jittered fleets     %7d   %11d", tp+fn+fp+tn, tp, fn, fp, tn)
	for _, w := range wrong {
		t.Error(w)
	}
}

// checkSimulated simulates cfg, ingests the records and checks them
// against pol (nil: inferred).
func checkSimulated(t testing.TB, cfg simulate.Config, pol *policy.Policy) *Result {
	t.Helper()
	res, _ := checkSimulatedStats(t, cfg, pol)
	return res
}

// checkSimulatedStats is checkSimulated returning the simulator's figures
// too.
func checkSimulatedStats(t testing.TB, cfg simulate.Config, pol *policy.Policy) (*Result, simulate.Stats) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "sim.ndjson")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	st, err := simulate.Run(context.Background(), cfg, w)
	if err == nil {
		err = w.Flush()
	}
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	return checkFiles(t, dir, pol, path), st
}

// TestResyncInferred checks resync with the policy inferred from the log
// rather than declared, on one fleet of each kind.
func TestResyncInferred(t *testing.T) {
	for _, g := range gridFleets() {
		if strings.Contains(g.name, "/") && !strings.HasSuffix(g.name, "/plain") && !g.lock {
			continue
		}
		cfg := simulate.Config{Devices: 200, Outage: time.Minute, Policy: g.resolve(t), Seed: 4}
		if g.tweak != nil {
			g.tweak(&cfg)
		}
		res := checkSimulated(t, cfg, nil)
		if flagged := len(of(res, "resync")) > 0; flagged != g.lock {
			t.Errorf("%s with the policy inferred (%+v): flagged %v, want %v%s", g.name, res.Summary.Policy.Policy, flagged, g.lock, describe(of(res, "resync")))
		}
	}
}
