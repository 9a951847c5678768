package policy

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestPresetDelays pins the interval [lo, hi] each preset draws from at
// attempts 0..12 (lo == hi: no jitter).
func TestPresetDelays(t *testing.T) {
	type span [2]float64
	pow2 := func(cap float64, shift int) []span { // 2^(a-shift) capped, exact
		var s []span
		for a := range 13 {
			c := 0.0
			if a >= shift {
				c = min(cap, float64(int64(1)<<(a-shift)))
			}
			s = append(s, span{c, c})
		}
		return s
	}
	want := map[string][]span{
		"paho-go":     pow2(600, 1),
		"paho-python": pow2(120, 0),
		"exponential": pow2(120, 0),
		"fixed":       slices.Repeat([]span{{5, 5}}, 13),
		"full-jitter": {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {0, 32}, {0, 64}, {0, 120}, {0, 120}, {0, 120}, {0, 120}, {0, 120}, {0, 120}},
		"autopaho": {{5, 10}, {5, 15}, {5, 22.5}, {5, 33.75}, {5, 50.625}, {5, 75.9375}, {5, 113.90625},
			{5, 170.859375}, {5, 256.2890625}, {5, 384.43359375}, {5, 576.650390625}, {5, 600}, {5, 600}},
	}
	if got := slices.Sorted(maps.Keys(want)); !slices.Equal(got, PresetNames()) {
		t.Fatalf("PresetNames() = %v, the test pins %v", PresetNames(), got)
	}
	for name, spans := range want {
		p, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		for a, s := range spans {
			lo, hi := p.Bounds(int64(a), 0)
			if lo != s[0] || hi != s[1] {
				t.Errorf("%s attempt %d: Bounds = [%v, %v], want [%v, %v]", name, a, lo, hi, s[0], s[1])
			}
			if c := p.Ceiling(int64(a)); c != s[1] {
				t.Errorf("%s attempt %d: Ceiling = %v, want %v", name, a, c, s[1])
			}
		}
	}
}

func TestPresets(t *testing.T) {
	names := PresetNames()
	if !slices.IsSorted(names) {
		t.Errorf("PresetNames() = %v, not sorted", names)
	}
	for _, name := range names {
		p, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != name || !p.Declared("name") || !p.Declared("delay") || !p.Declared("clean_session") {
			t.Errorf("%s: Name %q, declares name %v, delay %v, clean_session %v", name, p.Name, p.Declared("name"), p.Declared("delay"), p.Declared("clean_session"))
		}
		if d := Describe(name); d == "" || strings.Contains(d, "\n") {
			t.Errorf("Describe(%q) = %q, want one line", name, d)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if d := Describe("nosuch"); d != "" {
		t.Errorf("Describe(nosuch) = %q", d)
	}
}

func TestPresetIsACopy(t *testing.T) {
	p, _ := Preset("fixed")
	p.BaseDelayS = 99
	if q, _ := Preset("fixed"); q.BaseDelayS != 5 {
		t.Errorf("changing a preset's copy changed the preset: base %v", q.BaseDelayS)
	}
}

func TestPresetUnknown(t *testing.T) {
	_, err := Preset("paho")
	want := `unknown preset "paho"; expected one of autopaho, exponential, fixed, full-jitter, paho-go, paho-python`
	if err == nil || err.Error() != want {
		t.Errorf("Preset(paho) error = %v, want %s", err, want)
	}
}
