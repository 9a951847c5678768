package analyze

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// The per-device rules on simulated fleets: each flags the devices the
// model gives its pathology, and no other.

// retryRules are the rules of a device's own retry loop, which
// TestRetryRulesSimulated holds to simulated fleets.
var retryRules = []string{delayBoundsID, resetWithoutConnackID, reconnectWhileConnectedID, hotLoopID, authBackoffID, sessionSettingsID}

// simCase is a simulated fleet and what each rule of retryRules must say
// about it: a rule listed in fire must flag a share of the devices
// within the bounds given, every other rule nothing.
type simCase struct {
	name  string
	cfg   simulate.Config
	check *policy.Policy        // the policy checked against; nil: cfg.Policy
	fire  map[string][2]float64 // rule id -> least and most share of the devices flagged
}

// TestRetryRulesSimulated simulates fleets, clean and with a pathology,
// and checks that each rule of retryRules flags a share of the devices
// only where the model puts its pathology.
func TestRetryRulesSimulated(t *testing.T) {
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
	for _, id := range retryRules {
		got := of(res, id)
		share := tc.fire[id]
		if n := float64(len(got)); n < share[0]*devices || n > share[1]*devices {
			t.Errorf("seed %d: %s flagged %d of %d devices, want a share in [%g, %g]:%s",
				seed, id, len(got), devices, share[0], share[1], describe(got[:min(3, len(got))]))
		}
	}
}

// quietRules are the rules that judge what a device's records leave out
// (clock-anomaly, audit-gap, silent-give-up) and whether it came back
// under its own id (starvation, client-id-churn): the long tails, flaps,
// gateways and cut logs of a healthy fleet must trip none of them
// (TestHealthyFleetsQuiet).
var quietRules = []string{"clock-anomaly", "audit-gap", "silent-give-up", "starvation", "client-id-churn"}

// TestHealthyFleetsQuiet checks that fleets without pathologies, whatever
// their policy, flaps, capacity or gateways, trip none of the rules: in
// particular the full-jitter tail (cap 120 s) is not starvation.
func TestHealthyFleetsQuiet(t *testing.T) {
	fj := simPreset(t, "full-jitter")
	dec := policy.Policy{Name: "decorrelated", Delay: policy.Decorrelated, BaseDelayS: 1, MaxDelayS: 120, MinConnectSpacingS: 0.25}
	flaps := simulate.Config{Devices: 200, Outage: time.Minute, Policy: fj, Seed: 5, Flaps: 3, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second}
	cases := []struct {
		name string
		cfg  simulate.Config
	}{
		{"full-jitter seed 1", simulate.Config{Devices: 200, Outage: time.Minute, Policy: fj, Seed: 1}},
		{"full-jitter seed 2, 5 s outage", simulate.Config{Devices: 200, Outage: 5 * time.Second, Policy: fj, Seed: 2}},
		{"full-jitter seed 3, 10 min outage", simulate.Config{Devices: 200, Outage: 10 * time.Minute, Policy: fj, Seed: 3}},
		{"decorrelated", simulate.Config{Devices: 200, Outage: time.Minute, Policy: dec, Seed: 4}},
		{"flaps", flaps},
		{"capacity 3/s", simulate.Config{Devices: 200, Outage: time.Minute, Policy: fj, Seed: 6, Capacity: 3}},
		{"gateways of 4", simulate.Config{Devices: 200, Outage: time.Minute, Policy: fj, Seed: 7, DevicesPerHost: 4}},
		{"log cut 90 s after the outage", simulate.Config{Devices: 200, Outage: time.Minute, Policy: fj, Seed: 8, Horizon: 150 * time.Second}},
		{"2000 devices", simulate.Config{Devices: 2000, Outage: time.Minute, Policy: fj, Seed: 9}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := checkLog(t, strings.Join(simLines(t, tc.cfg), ""), nil)
			for _, id := range quietRules {
				if got := of(res, id); len(got) > 0 {
					t.Errorf("%s: %d findings, want none:%s", id, len(got), describe(got[:min(len(got), 3)]))
				}
			}
		})
	}
}

// TestEditedSimulatedLog edits a simulated log the way real collections go
// wrong and checks that each rule flags the device edited for it, and
// only that one.
func TestEditedSimulatedLog(t *testing.T) {
	cfg := simulate.Config{Devices: 40, Outage: time.Minute, Policy: simPreset(t, "full-jitter"), Seed: 13, DevicesPerHost: 2,
		Flaps: 1, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second}
	lines := simLines(t, cfg)
	var out []string
	seen := map[string]int{}  // records of each device so far
	fails := map[string]int{} // attempt_failed records of each device so far
	for _, l := range lines {
		r := parseSim(t, l)
		n := seen[r.ClientID]
		seen[r.ClientID]++
		if r.Outcome == "attempt_failed" {
			fails[r.ClientID]++
		}
		switch {
		case r.ClientID == "dev-0007" && n > 6: // the device falls silent after a failure
			continue
		case r.ClientID == "dev-0011" && r.Outcome == "attempt_failed" && fails[r.ClientID] == 2: // a failure never collected
			continue
		case r.ClientID == "dev-0013" && n == 5: // a clock stepped back 30 s for one record
			l = strings.Replace(l, r.RecordedAt, shiftStamp(t, r.RecordedAt, -30*time.Second), 1)
		}
		out = append(out, l)
	}
	out = append(out, `{"client_id":"dev-0017","attempt":2,"backoff_delay_s":-1.5,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:33.1+00:00"}`+"\n")
	res := checkLog(t, strings.Join(out, ""), nil)
	for _, c := range []struct {
		rule string
		want []string
	}{
		{"silent-give-up", []string{"dev-0007"}},
		{"audit-gap", []string{"dev-0011", Fleet}},
		{"clock-anomaly", []string{"dev-0013"}},
	} {
		if got := devicesOf(res, c.rule); !slices.Equal(got, c.want) {
			t.Errorf("%s flags %v, want %v:%s", c.rule, got, c.want, describe(of(res, c.rule)))
		}
	}
	if fs := of(res, "audit-gap"); len(fs) != 3 { // dev-0011: an unrecorded outcome and a device_seq gap
		t.Errorf("%d audit-gap findings, want 3:%s", len(fs), describe(fs))
	}
}
