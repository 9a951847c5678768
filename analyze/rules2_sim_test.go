package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// rules2 are the rules whose behaviour on simulated fleets this file pins.
var rules2 = []string{"clock-anomaly", "audit-gap", "silent-give-up", "starvation", "client-id-churn"}

// simLines runs simulate and returns its records, one line each.
func simLines(t *testing.T, cfg simulate.Config) []string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := simulate.Run(context.Background(), cfg, &buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	return lines[:len(lines)-1] // after the last newline: nothing
}

// simRecord is what these tests read of a simulated line.
type simRecord struct {
	ClientID   string `json:"client_id"`
	Outcome    string `json:"outcome"`
	RecordedAt string `json:"recorded_at"`
	Fail       string `json:"failure_class"`
}

func parseSim(t *testing.T, line string) simRecord {
	t.Helper()
	var r simRecord
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return r
}

// devicesOf returns the devices the findings of rule name, sorted.
func devicesOf(res *Result, rule string) []string {
	var ds []string
	for _, f := range of(res, rule) {
		ds = append(ds, f.Device)
	}
	slices.Sort(ds)
	return slices.Compact(ds)
}

// TestRules2CleanFleets checks that fleets without pathologies, whatever
// their policy, flaps, capacity or gateways, trip none of the rules: in
// particular the full-jitter tail (cap 120 s) is not starvation.
func TestRules2CleanFleets(t *testing.T) {
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
			for _, id := range rules2 {
				if got := of(res, id); len(got) > 0 {
					t.Errorf("%s: %d findings, want none:%s", id, len(got), describe(got[:min(len(got), 3)]))
				}
			}
		})
	}
}

// TestRules2BadAuthStarves checks that the devices with bad credentials,
// which never recover, are exactly the ones starvation flags, as errors,
// and that silent-give-up leaves them alone: their last backoff_wait
// opens past the end of the log.
func TestRules2BadAuthStarves(t *testing.T) {
	lines := simLines(t, simulate.Config{Devices: 200, Outage: time.Minute, Policy: simPreset(t, "full-jitter"), Seed: 11, BadAuth: 0.02})
	var bad []string
	for _, l := range lines {
		if r := parseSim(t, l); r.Fail == "auth" && !slices.Contains(bad, r.ClientID) {
			bad = append(bad, r.ClientID)
		}
	}
	slices.Sort(bad)
	res := checkLog(t, strings.Join(lines, ""), nil)
	want := append(slices.Clone(bad), Fleet)
	slices.Sort(want)
	if got := devicesOf(res, "starvation"); !slices.Equal(got, want) {
		t.Errorf("starvation flags %v, want %v", got, want)
	}
	for _, f := range of(res, "starvation") {
		if f.Device != Fleet && f.Severity != Error {
			t.Errorf("%s: severity %s, want error", f.Device, f.Severity)
		}
		if f.Device == Fleet && !strings.Contains(f.Explanation, "Jain's fairness index") {
			t.Errorf("fleet finding without the fairness index: %s", f.Explanation)
		}
	}
	if got := of(res, "silent-give-up"); len(got) > 0 {
		t.Errorf("silent-give-up flags devices still retrying:%s", describe(got))
	}
}

// TestRules2FixedCapacityStarves checks a fixed-timer fleet against a
// broker that accepts one connect a second: every round one device gets
// in and the rest are refused again; those still refused at the end of
// the log starved.
func TestRules2FixedCapacityStarves(t *testing.T) {
	cfg := simulate.Config{Devices: 100, Outage: time.Minute, Policy: simPreset(t, "fixed"), Seed: 12, Capacity: 1, Horizon: 410 * time.Second}
	res := checkLog(t, strings.Join(simLines(t, cfg), ""), nil)
	st := res.Summary.Fleet
	never := st.Lost - st.Recovered
	if never == 0 || 2*st.Recovered < st.Lost {
		t.Fatalf("the run does not test what it should: %d of %d recovered", st.Recovered, st.Lost)
	}
	errs := 0
	for _, f := range of(res, "starvation") {
		if f.Severity == Error {
			errs++
		}
	}
	if errs != never {
		t.Errorf("%d starvation errors, want one for each of the %d devices never recovered:%s", errs, never, describe(of(res, "starvation")))
	}
}

// TestRules2EditedLog edits a simulated log the way real collections go
// wrong and checks that each rule flags the device edited for it, and
// only that one.
func TestRules2EditedLog(t *testing.T) {
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

// TestRules2ChurnedHost renames a device of a gateway after a flap drops
// its session, as a client that restarts under a fresh client id does.
func TestRules2ChurnedHost(t *testing.T) {
	cfg := simulate.Config{Devices: 20, Outage: time.Minute, Policy: simPreset(t, "full-jitter"), Seed: 14, DevicesPerHost: 2,
		Flaps: 1, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second}
	lines := simLines(t, cfg)
	victim := ""
	for _, l := range lines { // the first device whose session a flap dropped
		if r := parseSim(t, l); r.Outcome == "disconnected" && !strings.Contains(l, `"device_seq":0,`) {
			victim = r.ClientID
			break
		}
	}
	if victim == "" {
		t.Fatal("no session dropped by the flap")
	}
	var out []string
	after := -1 // records of the victim since its session dropped
	for _, l := range lines {
		r := parseSim(t, l)
		if r.ClientID == victim && after >= 0 {
			if after++; after == 1 {
				continue // the new process starts after a restart, not at the drop's instant
			}
			l = strings.Replace(l, `"client_id":"`+victim+`"`, `"client_id":"`+victim+`-r2"`, 1)
		}
		if r.ClientID == victim && r.Outcome == "disconnected" && !strings.Contains(l, `"device_seq":0,`) {
			after = 0
		}
		out = append(out, l)
	}
	res := checkLog(t, strings.Join(out, ""), nil)
	if got, want := devicesOf(res, "client-id-churn"), []string{victim + "-r2"}; !slices.Equal(got, want) {
		t.Errorf("client-id-churn flags %v, want %v:%s", got, want, describe(of(res, "client-id-churn")))
	}
}

// shiftStamp moves an RFC 3339 timestamp by d.
func shiftStamp(t *testing.T, s string, d time.Duration) string {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at.Add(d).UTC().Format("2006-01-02T15:04:05.999999-07:00")
}

// unitT0 is the instant the unit tests' timelines count from.
var unitT0 = simulate.DefaultStart.UnixNano()

// unitEvent is a record at sec seconds after unitT0, with no optional field.
func unitEvent(sec float64, o auditfmt.Outcome, attempt int64, delay float64) Event {
	return Event{At: unitT0 + nanos(sec), Outcome: o, Attempt: attempt, Delay: delay, Ceiling: math.NaN(), Seq: -1, Reason: -1, Presence: -1}
}

// unitDevice is a device of events, numbered as lines 1, 2, ... of source
// 0 unless they say otherwise, not yet built.
func unitDevice(id string, evs ...Event) *Device {
	d := &Device{ID: id, Events: evs}
	for i := range d.Events {
		if d.Events[i].Ref.Line == 0 {
			d.Events[i].Ref.Line = int64(i + 1)
		}
		d.Events[i].Ref.Row = int64(i)
	}
	return d
}

// withSeq numbers the events with device_seq from first.
func withSeq(first int64, evs ...Event) []Event {
	for i := range evs {
		evs[i].Seq = first + int64(i)
	}
	return evs
}

// runRule builds the devices and runs rule over them as Check does; end is
// the end of the log (0: the last record of the devices).
func runRule(rule Rule, end int64, devs ...*Device) (*Context, []Finding) {
	fc := newFleetCounter(0)
	c := &Context{Fleet: &fc.St}
	for _, d := range devs {
		d.Build()
		fc.add(d)
		if n := len(d.Events); n > 0 {
			c.End = max(c.End, d.Events[n-1].At)
		}
		rule.Device(c, d)
	}
	if end != 0 {
		c.End = end
	}
	c.Fleet = fc.stats()
	rule.Finish(c)
	return c, c.findings
}
