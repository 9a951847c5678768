package analyze

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// A check that leaves explanations to be written when read gives, when
// they are read, the explanations written at once (as the device is
// read), on every rule's
// logs and on simulated fleets, whose devices' buffers the read reuses
// long before the explanations are written. Every finding is otherwise
// the same.
func TestLazyExplanations(t *testing.T) {
	var dirs []string
	var opts []Options
	rules, err := os.ReadDir("testdata/rules")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range rules {
		base := filepath.Join("testdata/rules", d.Name())
		var o Options
		if p, err := policy.Load(filepath.Join(base, "policy.toml")); err == nil {
			o.Policy = &p
		}
		logs, _ := filepath.Glob(filepath.Join(base, "positive*.ndjson"))
		dirs, opts = append(dirs, bucketed(t, 0, logs...)), append(opts, o)
	}
	// jittered: each device's times its own, so a time read from a reused buffer would show
	flat, _ := simDataset(t, simulate.Config{Devices: 400, Outage: time.Minute, Seed: 9, Policy: *declaredPreset(t, "full-jitter", ""), BadAuth: 0.05,
		Capacity: 40, Flaps: 1, FlapUp: 3 * time.Second, FlapDown: 10 * time.Second, DevicesPerHost: 3, OutboxPerS: 1, AttemptIDs: true})
	sim := bucketed(t, 3, filepath.Join(filepath.Dir(flat), "sim.ndjson")) // files of 500 rows: many batches
	dirs = append(dirs, sim, sim)
	opts = append(opts, Options{Policy: declaredPreset(t, "full-jitter", "startup_spread_s = 30\nconnect_budget_per_s = 20\n")},
		Options{Policy: declaredPreset(t, "exponential", "")})
	lazy := map[string]int{}
	for i, dir := range dirs {
		want, err := Check(dir, opts[i])
		if err != nil {
			t.Fatal(err)
		}
		o := opts[i]
		o.LazyExplanations = true
		got, err := Check(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Findings) != len(want.Findings) {
			t.Fatalf("%s: %d findings lazily, %d at once", dir, len(got.Findings), len(want.Findings))
		}
		for k := range got.Findings {
			g, w := got.Findings[k], want.Findings[k]
			if g.lazy != nil {
				lazy[g.Kind]++
			}
			if x := g.Explained(); x != w.Explanation {
				t.Errorf("%s: finding %d (%s):\nlazily %q\nat once %q", dir, k, g.Kind, x, w.Explanation)
			}
			g.Explanation, g.lazy = w.Explanation, nil
			if !sameFinding(g, w) {
				t.Errorf("%s: finding %d differs: %+v, at once %+v", dir, k, g, w)
			}
		}
	}
	// a split check with them left to be written carries them written in
	// its partials (a closure does not encode), and gives Check's
	want, err := Check(sim, opts[len(opts)-1])
	if err != nil {
		t.Fatal(err)
	}
	o := opts[len(opts)-1]
	o.LazyExplanations = true
	got := splitCheck(t, sim, o, 0)
	for k := range min(len(got.Findings), len(want.Findings)) {
		if x := got.Findings[k].Explained(); x != want.Findings[k].Explanation {
			t.Fatalf("split, finding %d (%s):\nlazily %q\nat once %q", k, got.Findings[k].Kind, x, want.Findings[k].Explanation)
		}
	}
	if len(got.Findings) != len(want.Findings) {
		t.Errorf("split: %d findings, Check %d", len(got.Findings), len(want.Findings))
	}
	for _, kind := range []string{"delay-bounds/delay-outside-bounds", "delay-bounds/ceiling-mismatch", "unscheduled-connect/no-socket-open-due",
		"audit-gap/outcome-not-recorded", "reset-without-connack/no-connack", "spacing/open-too-soon"} {
		if lazy[kind] == 0 {
			t.Errorf("no %s explanation was left to be written: untested", kind)
		}
	}
	t.Logf("explanations written when read, by kind: %v", lazy)
}

// sameFinding reports whether a and b are the same finding.
func sameFinding(a, b Finding) bool {
	return a.Rule == b.Rule && a.Kind == b.Kind && a.Severity == b.Severity && a.Device == b.Device && a.Start == b.Start &&
		a.End == b.End && a.Message == b.Message && a.Explanation == b.Explanation && slices.Equal(a.Records, b.Records)
}
