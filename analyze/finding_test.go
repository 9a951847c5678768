package analyze

import (
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
