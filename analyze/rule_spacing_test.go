package analyze

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// auditDev describes a device of a test log: it loses the broker at t0
// (after 14:17:30Z), then makes the attempts of steps; pending, when not
// negative, is the delay of a last backoff_wait the log ends on.
type auditDev struct {
	id, host string
	t0       time.Duration
	steps    []auditStep
	pending  float64
}

// auditStep is one attempt: the delay drawn, the rate-limit wait, and
// whether it connected (else it failed).
type auditStep struct {
	delay, wait float64
	ok          bool
}

// auditStart is the instant test logs start from.
var auditStart = time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC)

// auditLog writes the devices' records as seed-format NDJSON, in the order
// of recorded_at, with a latency of 50 ms from socket-open to outcome.
func auditLog(devs ...auditDev) string {
	type line struct {
		at   time.Duration
		text string
	}
	var lines []line
	for _, d := range devs {
		rec := func(at time.Duration, attempt int, delay float64, outcome, extra string) {
			host := ""
			if d.host != "" {
				host = fmt.Sprintf(`, "host_id": %q`, d.host)
			}
			lines = append(lines, line{at, fmt.Sprintf(`{"client_id": %q, "attempt": %d, "backoff_delay_s": %v, "outcome": %q, "clean_session": false, "recorded_at": %q%s%s}`,
				d.id, attempt, delay, outcome, auditStart.Add(at).Format("2006-01-02T15:04:05.000000-07:00"), host, extra)})
		}
		t, attempt := d.t0, 0
		rec(t, 0, 0, "disconnected", `, "reason_code": 139`)
		for _, s := range d.steps {
			rec(t, attempt, s.delay, "backoff_wait", "")
			t += secondsDur(s.delay)
			if s.wait > 0 {
				rec(t, attempt, s.wait, "rate_limited_wait", "")
				t += secondsDur(s.wait)
			}
			t += 50 * time.Millisecond
			if s.ok {
				attempt = 0
				rec(t, 0, s.delay, "connected", `, "session_present": true`)
			} else {
				attempt++
				rec(t, attempt, s.delay, "attempt_failed", `, "failure_class": "transient"`)
			}
		}
		if d.pending >= 0 {
			rec(t, attempt, d.pending, "backoff_wait", "")
		}
	}
	slices.SortStableFunc(lines, func(a, b line) int { return int(a.at - b.at) })
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text + "\n")
	}
	return b.String()
}

func secondsDur(s float64) time.Duration { return time.Duration(s*1e6+0.5) * time.Microsecond }

// mustPolicy parses a policy file's text.
func mustPolicy(t testing.TB, toml string) *policy.Policy {
	t.Helper()
	p, err := policy.Parse("test.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	return &p
}

const spacingPolicy = "delay = \"full_jitter\"\nbase_delay_s = 1\nmultiplier = 2\nmax_delay_s = 120\nmin_connect_spacing_s = 0.25\n"

func hasNote(res *Result, prefix string) bool {
	return slices.ContainsFunc(res.Summary.Notes, func(n string) bool { return strings.HasPrefix(n, prefix) })
}

func TestSpacingUndeclared(t *testing.T) {
	log := auditLog(auditDev{id: "dev-1", steps: []auditStep{{0.05, 0, false}, {0.01, 0, true}}, pending: -1})
	for _, pol := range []*policy.Policy{nil, mustPolicy(t, "delay = \"fixed\"\nbase_delay_s = 5\n")} {
		res := checkLog(t, log, pol)
		if got := of(res, "spacing"); len(got) > 0 {
			t.Errorf("findings without a declared spacing:%s", describe(got))
		}
		if !hasNote(res, "spacing: min_connect_spacing_s is not declared") {
			t.Errorf("no note about the undeclared spacing; notes: %q", res.Summary.Notes)
		}
	}
	res := checkLog(t, log, mustPolicy(t, "delay = \"fixed\"\nbase_delay_s = 5\nmin_connect_spacing_s = 0\n"))
	if got := of(res, "spacing"); len(got) > 0 || !hasNote(res, "spacing: min_connect_spacing_s is 0") {
		t.Errorf("spacing 0: findings %s, notes %q", describe(got), res.Summary.Notes)
	}
}

// TestSpacingAcrossDevices checks a host whose devices are not contiguous
// in the dataset (dev-b of another host lies between them), the
// tolerance, and that a host gets one finding with the count and the
// closest pair first in its records.
func TestSpacingAcrossDevices(t *testing.T) {
	log := auditLog(
		// gw-1: opens at 1.0 (dev-a), 1.2485 (dev-c: 0.2485 s, flagged),
		// 1.498 (dev-a, 0.2495 s: within the tolerance), 1.51 (dev-c, flagged, the closest)
		auditDev{id: "dev-a", host: "gw-1", steps: []auditStep{{1.0, 0, false}, {0.448, 0, true}}, pending: -1},
		auditDev{id: "dev-b", host: "gw-2", steps: []auditStep{{1.0, 0, true}}, pending: -1},
		auditDev{id: "dev-c", host: "gw-1", steps: []auditStep{{1.2485, 0, false}, {0.2115, 0, true}}, pending: -1},
	)
	res := checkLog(t, log, mustPolicy(t, spacingPolicy))
	got := of(res, "spacing")
	if len(got) != 1 || got[0].Device != "gw-1" {
		t.Fatalf("want one finding for gw-1, got:%s", describe(got))
	}
	f := got[0]
	for _, want := range []string{"gw-1: 2 socket-open(s)", "closest 0.012 s apart (dev-a, dev-c)"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q does not say %q", f.Message, want)
		}
	}
	for _, want := range []string{"min_connect_spacing_s = 0.25 s (declared)", "below 0.249 s", "made 4 socket-opens", "from 2 device(s) (dev-a, dev-c)",
		"dev-a opened at 2026-11-30T14:17:31.498Z and dev-c at 2026-11-30T14:17:31.51Z, 0.012 s apart"} {
		if !strings.Contains(f.Explanation, want) {
			t.Errorf("explanation %q does not say %q", f.Explanation, want)
		}
	}
	if start, end := auditStart.Add(1000*time.Millisecond).UnixNano(), auditStart.Add(1510*time.Millisecond).UnixNano(); f.Start != start || f.End != end {
		t.Errorf("Start, End = %d, %d; want %d, %d", f.Start, f.End, start, end)
	}
	if len(f.Records) != 4 {
		t.Errorf("records %v: want the 4 backoff_waits of the flagged pairs", f.Records)
	}
}

// TestSpacingRateLimited checks that the open is derived with the
// rate-limit wait, and that a last backoff_wait whose open lies after the
// device's last record is not an open.
func TestSpacingRateLimited(t *testing.T) {
	log := auditLog(
		auditDev{id: "dev-a", host: "gw-1", steps: []auditStep{{1.0, 0, true}}, pending: -1},
		// due at 1.1, deferred to 1.25
		auditDev{id: "dev-b", host: "gw-1", steps: []auditStep{{1.1, 0.15, true}}, pending: -1},
		// fails at 0.55, then waits: its open at 1.35 lies after its last record
		auditDev{id: "dev-c", host: "gw-1", steps: []auditStep{{0.5, 0, false}}, pending: 0.8},
	)
	res := checkLog(t, log, mustPolicy(t, spacingPolicy))
	if got := of(res, "spacing"); len(got) > 0 {
		t.Errorf("unexpected findings:%s", describe(got))
	}
}

func TestDeviceOf(t *testing.T) {
	devs := []hostDevice{{"a", Ref{Row: 0}}, {"b", Ref{Row: 10}}, {"c", Ref{File: 1, Row: 0}}}
	for _, tc := range []struct {
		ref  Ref
		want string
	}{{Ref{Row: 0}, "a"}, {Ref{Row: 9}, "a"}, {Ref{Row: 10}, "b"}, {Ref{Row: 99}, "b"}, {Ref{File: 1, Row: 3}, "c"}} {
		if got := deviceOf(devs, tc.ref); got != tc.want {
			t.Errorf("deviceOf(%v) = %s, want %s", tc.ref, got, tc.want)
		}
	}
}

// TestSimSpacing: spacing on a simulated fleet of gateways, which the
// model fixes: it must flag the hosts that open without the spacing gate,
// and only when the gate is off.
func TestSimSpacing(t *testing.T) {
	pol := declaredPreset(t, "full-jitter", "")
	cfg := simulate.Config{Devices: 400, Outage: 20 * time.Second, Policy: *pol, Seed: 5, DevicesPerHost: 4, Capacity: 50}
	if got, _ := simFindings(t, cfg, pol, "spacing"); len(got) > 0 {
		t.Errorf("a fleet that spaces its opens 0.25 s per host:%s", describe(got))
	}
	// the same clients without the spacing gate, checked against the
	// declared 0.25 s
	cfg.Policy.MinConnectSpacingS = 0
	got, _ := simFindings(t, cfg, pol, "spacing")
	t.Logf("without the spacing gate: %d of 100 hosts flagged", len(got))
	if len(got) < 10 {
		t.Errorf("without the spacing gate: %d hosts flagged, want at least 10", len(got))
	}
	for _, f := range got {
		if f.Device[:3] != "gw-" {
			t.Errorf("finding for %s, want a gw- host", f.Device)
		}
	}
}
