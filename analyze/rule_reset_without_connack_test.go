package analyze

import (
	"strings"
	"testing"
)

// sessionThenReset writes a device that fails three times, connects
// (keeping its counter at 3, as a client with stable_reset_s does), stays
// up for up seconds, and, after the drop, backs off at attempt 0.
func sessionThenReset(w *strings.Builder, dev string, up float64) {
	l := newDevLog(w, dev, 0.003).drop()
	for _, d := range []float64{0.41, 1.3, 2.2} {
		l.wait(d).fail("attempt_failed", `"failure_class": "transient"`)
	}
	l.wait(3.1)
	l.t += devLogLatency
	l.rec("connected", l.last) // counter kept at 3
	l.after(up)
	l.attempt = 0
	l.drop().wait(0.52).connect()
}

func TestResetStableInterval(t *testing.T) {
	p := *mustPolicy(t, fullJitterTOML+"stable_reset_s = 30\n")
	tests := []struct {
		up   float64
		want bool
	}{{30, false}, {29.999999, false}, {29.99998, true}, {2.5, true}, {300, false}} // 1 µs tolerance
	for _, tc := range tests {
		var w strings.Builder
		sessionThenReset(&w, "dev-0001", tc.up)
		got := of(checkLog(t, w.String(), &p), resetWithoutConnackID)
		if (len(got) > 0) != tc.want {
			t.Errorf("up %g s: findings %v, want %v:%s", tc.up, len(got) > 0, tc.want, describe(got))
		}
	}
}

func TestResetWithoutConnackAggregates(t *testing.T) {
	var w strings.Builder
	l := newDevLog(&w, "dev-0001", 0.002).drop()
	for range 3 { // three times: two failures, then the counter back to 0
		l.wait(0.5).fail("attempt_failed").wait(1.1).fail("attempt_failed")
		l.attempt = 0
	}
	l.wait(0.7).connect()
	p := *mustPolicy(t, fullJitterTOML)
	res := checkLog(t, w.String(), &p)
	got := of(res, resetWithoutConnackID)
	if len(got) != 1 {
		t.Fatalf("%d findings, want 1:%s", len(got), describe(got))
	}
	if want := "attempt counter dropped without a connected record (3 times); the first from 2 to 0"; got[0].Message != want {
		t.Errorf("message %q, want %q", got[0].Message, want)
	}
	if len(got[0].Records) != 6 {
		t.Errorf("%d records, want the 3 drops and the records before them", len(got[0].Records))
	}
	for _, n := range res.Summary.Notes {
		if strings.HasPrefix(n, resetWithoutConnackID) {
			t.Errorf("note with a declared policy: %s", n)
		}
	}
}

func TestResetStableUndeclared(t *testing.T) {
	var w strings.Builder
	sessionThenReset(&w, "dev-0001", 2.5)
	// a declared policy without stable_reset_s resets on CONNACK: nothing to say
	p := *mustPolicy(t, fullJitterTOML)
	res := checkLog(t, w.String(), &p)
	if got := of(res, resetWithoutConnackID); len(got) > 0 {
		t.Errorf("findings without stable_reset_s:%s", describe(got))
	}
	// no declared policy: the stable interval is unknown, and the summary says so
	res = checkLog(t, w.String(), nil)
	if got := of(res, resetWithoutConnackID); len(got) > 0 {
		t.Errorf("findings without a declared policy:%s", describe(got))
	}
	if !strings.Contains(strings.Join(res.Summary.Notes, "\n"), resetWithoutConnackID+": stable_reset_s is not declared") {
		t.Errorf("no note on stable_reset_s: %q", res.Summary.Notes)
	}
}

func TestResetBoundaries(t *testing.T) {
	var w strings.Builder
	// a gave_up record ends the client's loop: a restart begins at 0
	newDevLog(&w, "dev-0001", 0.001).drop().wait(0.4).fail("attempt_failed").wait(1.7).fail("attempt_failed").
		rec("gave_up", 0).after(60).rec("stopped", 0)
	l := newDevLog(&w, "dev-0001", 200)
	l.attempt = 0
	l.wait(0.3).connect()
	// link-stage counters are the link's own
	l = newDevLog(&w, "dev-0002", 0.002).drop().wait(0.2, `"stage": "link"`).fail("attempt_failed", `"stage": "link"`)
	l.attempt = 0
	l.wait(0.5).connect()
	p := *mustPolicy(t, fullJitterTOML)
	if got := of(checkLog(t, w.String(), &p), resetWithoutConnackID); len(got) > 0 {
		t.Errorf("unexpected findings:%s", describe(got))
	}
}
