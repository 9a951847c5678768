package analyze

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// rules1 are the rules this file's simulations check.
var rules1 = []string{delayBoundsID, resetWithoutConnackID, reconnectWhileConnectedID, hotLoopID, authBackoffID, sessionSettingsID}

// simCase is a simulated fleet and what each rule of rules1 must say
// about it: a rule listed in fire must flag a share of the devices
// within the bounds given, every other rule nothing.
type simCase struct {
	name  string
	cfg   simulate.Config
	check *policy.Policy        // the policy checked against; nil: cfg.Policy
	fire  map[string][2]float64 // rule id -> least and most share of the devices flagged
}

func TestRules1Simulated(t *testing.T) {
	fullJitter := simPreset(t, "full-jitter")
	equal := *mustPolicy(t, "delay = \"equal_jitter\"\nbase_delay_s = 0.5\nmultiplier = 2\nmax_delay_s = 60\nclean_session = false\n")
	decorrelated := *mustPolicy(t, "delay = \"decorrelated_jitter\"\nbase_delay_s = 1\nmax_delay_s = 90\nclean_session = false\n")
	authMin := *mustPolicy(t, string(fullJitter.AppendTOML(nil))+"auth_min_delay_s = 300\n")
	stable := *mustPolicy(t, string(fullJitter.AppendTOML(nil))+"stable_reset_s = 30\n")
	cleanFleet := *mustPolicy(t, "delay = \"full_jitter\"\nbase_delay_s = 1\nmultiplier = 2\nmax_delay_s = 120\nclean_session = true\n")
	persistent := *mustPolicy(t, "delay = \"full_jitter\"\nbase_delay_s = 1\nmultiplier = 2\nmax_delay_s = 120\nclean_session = false\n")
	none := *mustPolicy(t, "delay = \"none\"\nclean_session = false\n")
	cases := []simCase{
		{name: "full-jitter", cfg: simulate.Config{Policy: fullJitter}},
		{name: "full-jitter-hosts", cfg: simulate.Config{Policy: fullJitter, DevicesPerHost: 8}},
		{name: "equal-jitter", cfg: simulate.Config{Policy: equal}},
		{name: "decorrelated", cfg: simulate.Config{Policy: decorrelated}},
		{name: "capacity", cfg: simulate.Config{Policy: fullJitter, Capacity: 20}},
		{name: "flaps", cfg: simulate.Config{Policy: fullJitter, Flaps: 3, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second}},
		{name: "flaps-stable-reset", cfg: simulate.Config{Policy: stable, Flaps: 3, FlapUp: 40 * time.Second, FlapDown: 20 * time.Second}},
		{name: "paho-go-flaps", cfg: simulate.Config{Policy: simPreset(t, "paho-go"), Flaps: 3, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second}},
		{name: "bad-auth-min", cfg: simulate.Config{Policy: authMin, BadAuth: 0.05}},
		// the service stage's records are no attempts of the session
		{name: "service-down", cfg: simulate.Config{Policy: fullJitter, ServiceDown: 40 * time.Second}},
		// nor are the address stage's: its attempts are no sockets to the broker
		{name: "address-down", cfg: simulate.Config{Policy: fullJitter, AddressDown: true}},
		{name: "address-down-flaps", cfg: simulate.Config{Policy: fullJitter, AddressDown: true, Flaps: 2, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second}},
		{name: "service-flaps", cfg: simulate.Config{Policy: fullJitter, Service: true, Flaps: 2, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second}},
		// what the pathologies must trip
		{name: "bad-auth", cfg: simulate.Config{Policy: fullJitter, BadAuth: 0.05}, fire: map[string][2]float64{authBackoffID: {0.05, 0.05}}}, // exactly the devices with bad credentials
		{name: "none", cfg: simulate.Config{Policy: none, Outage: 5 * time.Second}, fire: map[string][2]float64{hotLoopID: {1, 1}}},
		// a 0.3 s timer rounds draws just under a ceiling of 1, 2, 4 ... s above it
		{name: "coarse-tick", cfg: simulate.Config{Policy: fullJitter, Tick: 300 * time.Millisecond}, fire: map[string][2]float64{delayBoundsID: {0.1, 0.6}}},
		// devices that reset on CONNACK where the fleet declares stable_reset_s: those that connected during a flap
		{name: "reset-on-connack", cfg: simulate.Config{Policy: fullJitter, Flaps: 2, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second},
			check: &stable, fire: map[string][2]float64{resetWithoutConnackID: {0.02, 1}}},
		{name: "clean-sessions", cfg: simulate.Config{Policy: cleanFleet}, check: &persistent, fire: map[string][2]float64{sessionSettingsID: {1, 1}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(2) {
				tc.run(t, seed)
			}
		})
	}
}

func (tc *simCase) run(t *testing.T, seed uint64) {
	t.Helper()
	const devices = 200
	cfg := tc.cfg
	cfg.Devices, cfg.Seed = devices, seed
	if cfg.Outage == 0 {
		cfg.Outage = 60 * time.Second
	}
	cfg.Horizon = cfg.Outage + time.Duration(cfg.Flaps)*(cfg.FlapUp+cfg.FlapDown) + 4*time.Minute
	var buf bytes.Buffer
	if _, err := simulate.Run(context.Background(), cfg, &buf); err != nil {
		t.Fatal(err)
	}
	pol := tc.check
	if pol == nil {
		pol = &cfg.Policy
	}
	res := checkLog(t, buf.String(), pol)
	for _, id := range rules1 {
		got := of(res, id)
		share := tc.fire[id]
		if n := float64(len(got)); n < share[0]*devices || n > share[1]*devices {
			t.Errorf("seed %d: %s flagged %d of %d devices, want a share in [%g, %g]:%s",
				seed, id, len(got), devices, share[0], share[1], describe(got[:min(3, len(got))]))
		}
	}
}

// devLog writes one device's records into a seed-format log, for rule
// tests: times are seconds from 2026-11-30T14:17:30Z, and each connect
// resolves 50 ms after its socket-open, as in package simulate.
type devLog struct {
	w       *strings.Builder
	dev     string
	t       float64 // now, s from the drop
	attempt int
	last    float64 // the last delay drawn
	clean   bool
}

const devLogLatency = 0.05

func newDevLog(w *strings.Builder, dev string, at float64) *devLog {
	return &devLog{w: w, dev: dev, t: at}
}

// rec writes a record now; extra are further members, like `"ceiling_s": 8`.
func (l *devLog) rec(outcome string, delay float64, extra ...string) *devLog {
	ts := time.Date(2026, 11, 30, 14, 17, 30, 0, time.UTC).Add(time.Duration(l.t * 1e9).Round(time.Microsecond))
	fmt.Fprintf(l.w, `{"client_id": %q, "attempt": %d, "backoff_delay_s": %s, "outcome": %q, "clean_session": %t, "recorded_at": %q`,
		l.dev, l.attempt, fmtSeconds(delay), outcome, l.clean, ts.Format("2006-01-02T15:04:05.000000-07:00"))
	for _, e := range extra {
		l.w.WriteString(", " + e)
	}
	l.w.WriteString("}\n")
	return l
}

func (l *devLog) drop() *devLog { return l.rec("disconnected", 0, `"reason_code": 139`) }

// wait draws delay d and moves to the socket-open.
func (l *devLog) wait(d float64, extra ...string) *devLog {
	l.rec("backoff_wait", d, extra...)
	l.t += d
	l.last = d
	return l
}

// fail is a failure 50 ms after the socket-open, counter incremented.
func (l *devLog) fail(outcome string, extra ...string) *devLog {
	l.t += devLogLatency
	l.attempt++
	return l.rec(outcome, l.last, extra...)
}

// connect is a CONNACK 50 ms after the socket-open, the counter reset.
func (l *devLog) connect() *devLog {
	l.t += devLogLatency
	l.attempt = 0
	return l.rec("connected", l.last)
}

// after lets s seconds pass.
func (l *devLog) after(s float64) *devLog { l.t += s; return l }
