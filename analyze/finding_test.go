package analyze

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestValidKind(t *testing.T) {
	for _, tt := range []struct {
		rule, kind string
		want       bool
	}{
		{"hot-loop", "hot-loop/tight-loop", true},
		{"delay-bounds", "delay-bounds/ceiling-mismatch", true},
		{"resync", "resync/lockstep2", true},
		{"hot-loop", "", false},
		{"hot-loop", "hot-loop", false},
		{"hot-loop", "hot-loop/", false},
		{"hot-loop", "spacing/open-too-soon", false},
		{"hot-loop", "hot-loop/Tight-Loop", false},
		{"hot-loop", "hot-loop/tight loop", false},
		{"hot-loop", "hot-loop/tight--loop", false},
		{"hot-loop", "hot-loop/-tight", false},
		{"hot-loop", "hot-loop/a/b", false},
	} {
		if got := validKind(tt.rule, tt.kind); got != tt.want {
			t.Errorf("validKind(%q, %q) = %v, want %v", tt.rule, tt.kind, got, tt.want)
		}
	}
}

// TestReportWantsKind: in a test, a finding reported without a kind of
// its rule panics, so that every rule's tests check every kind it
// reports (the fingerprints of findings rest on it).
func TestReportWantsKind(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), `a hot-loop finding of kind ""`) {
			t.Errorf("recovered %v, want a panic naming the rule", p)
		}
	}()
	var c Context
	c.Report(Finding{Rule: "hot-loop", Kind: "hot-loop/tight-loop"})
	if len(c.findings) != 1 {
		t.Fatalf("%d findings", len(c.findings))
	}
	c.Report(Finding{Rule: "hot-loop", Message: "retried"})
}

// sortedFindings orders runs of findings as a stable comparison sort of
// them all by severity (worst first), rule, device and start does,
// whatever order they come in: by rule and device, as a check makes
// them, or shuffled.
func TestSortFindings(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, shuffled := range []bool{false, true} {
		var fs []Finding
		for rule := range 6 {
			for dev := range 300 {
				for range r.IntN(3) {
					fs = append(fs, Finding{Rule: fmt.Sprintf("rule-%d", 5-rule), Severity: Severity(1 + r.IntN(3)), Device: fmt.Sprintf("dev-%04d", dev),
						Start: int64(r.IntN(4)), Message: fmt.Sprint(len(fs))}) // Message: which it was, for stability
				}
			}
		}
		if shuffled {
			r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
		}
		var one []Finding // a run of one severity and rule, as most are
		for dev := range 200 {
			one = append(one, Finding{Rule: "rule-3", Severity: Warning, Device: fmt.Sprintf("dev-%04d", dev), Message: fmt.Sprint(len(fs) + dev)})
		}
		runs := [][]Finding{fs[:len(fs)/3], nil, one, fs[len(fs)/3 : len(fs)/2], fs[len(fs)/2:]}
		want := slices.Concat(runs...)
		slices.SortStableFunc(want, compareFindings)
		if got := sortedFindings(runs); !slices.EqualFunc(got, want, func(a, b Finding) bool { return a.Message == b.Message }) {
			t.Errorf("shuffled %v: sortedFindings differs from a stable sort", shuffled)
		}
	}
}
