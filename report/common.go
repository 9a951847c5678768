package report

import (
	"math"
	"strconv"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
)

// Time formats t, Unix ns, as RFC 3339 in UTC.
func Time(t int64) string {
	return time.Unix(0, t).UTC().Format(time.RFC3339Nano)
}

// Span says how long it was from one record's time to a later record's,
// from and to Unix ns: "1.5s". Records a device wrote out of order (two
// threads, a clock stepped back) can stamp the later one earlier; a span
// is never shown negative: "0s (stamped 109µs earlier: written out of
// order)".
func Span(from, to int64) string {
	if to >= from {
		return time.Duration(to - from).String()
	}
	return "0s (stamped " + time.Duration(from-to).String() + " earlier: written out of order)"
}

// seconds formats s without an exponent and without trailing zeros.
func seconds(s float64) string {
	return strconv.FormatFloat(s, 'f', -1, 64)
}

// source returns the name of input i of sources, "stdin" for "-".
func source(sources []string, i int32) string {
	if i < 0 || int(i) >= len(sources) {
		return "?"
	}
	if sources[i] == "-" {
		return "stdin"
	}
	return sources[i]
}

// RefText names a record by its input and line: "log.ndjson:12".
func RefText(sources []string, ref analyze.Ref) string {
	return source(sources, ref.Source) + ":" + strconv.FormatInt(ref.Line, 10)
}

// ruleIndex maps rule ids to their index in rules.
func ruleIndex(rules []analyze.RuleInfo) map[string]int {
	m := make(map[string]int, len(rules))
	for i, ri := range rules {
		m[ri.ID] = i
	}
	return m
}

// rulesOf returns the rules that ran, followed by any rule a finding names
// that is not among them (so that every finding has a rule to point at).
func rulesOf(r *analyze.Result) []analyze.RuleInfo {
	rules := r.Rules
	idx := ruleIndex(rules)
	for _, f := range r.Findings {
		if _, ok := idx[f.Rule]; !ok {
			idx[f.Rule] = len(rules)
			rules = append(rules[:len(rules):len(rules)], analyze.RuleInfo{ID: f.Rule, Severity: f.Severity, Title: f.Rule})
		}
	}
	return rules
}

// number returns x, or nil for NaN and ±Inf, which JSON cannot hold.
func number(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// plural returns "1 thing" or "N things".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// skipReason returns why rule could not run, if it is among the result's
// skipped rules.
func skipReason(r *analyze.Result, rule string) (string, bool) {
	for _, s := range r.Summary.Skipped {
		if s.Rule == rule {
			return s.Reason, true
		}
	}
	return "", false
}
