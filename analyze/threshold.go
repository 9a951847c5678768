package analyze

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// A Threshold is a number a rule judges by that a check may set
// (Options.Thresholds; [rules.ID] in stormaudit.toml). docs/rules.md
// defines each where it defines the rule.
type Threshold struct {
	Name     string  // snake_case; a duration's ends in _s (seconds)
	Default  float64 // the value without a setting
	Min, Max float64 // the values it may take, inclusive
	Integer  bool    // whether it is a whole number
	Help     string
}

// Tunable is a rule with thresholds.
type Tunable interface {
	Thresholds() []Threshold
	// SetThreshold sets the threshold called name before the check; v
	// is valid for it (CheckThreshold).
	SetThreshold(name string, v float64)
}

// RuleThresholds lists the thresholds of every rule that has some, by
// rule id.
func RuleThresholds() map[string][]Threshold {
	out := map[string][]Threshold{}
	for _, r := range Rules() {
		if t, ok := r.(Tunable); ok {
			out[r.Info().ID] = t.Thresholds()
		}
	}
	return out
}

// CheckThreshold returns what is wrong with v as a value of t, or "".
func CheckThreshold(t Threshold, v float64) string {
	lo, hi := strconv.FormatFloat(t.Min, 'f', -1, 64), strconv.FormatFloat(t.Max, 'f', -1, 64)
	kind := "a number"
	if t.Integer {
		kind = "a whole number"
	}
	if math.IsNaN(v) || t.Integer && v != float64(int64(v)) || v < t.Min || v > t.Max {
		return kind + " from " + lo + " to " + hi
	}
	return ""
}

// setThresholds gives the rules the thresholds opts set. Unknown rules
// and names, and invalid values, are the caller's to refuse.
func setThresholds(rules []Rule, set map[string]map[string]float64) {
	for _, r := range rules {
		t, ok := r.(Tunable)
		if !ok {
			continue
		}
		for name, v := range set[r.Info().ID] {
			t.SetThreshold(name, v)
		}
	}
}

// seconds converts a threshold in seconds to a duration.
func seconds(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }

// spanText writes a threshold's duration as people say it: "1 min",
// "5 min", "2 h", "30 s", "1.5 s".
func spanText(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%d h", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return fmtSeconds(d.Seconds()) + " s"
}
