package analyze

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/simulate"
)

// retrying returns the records of a device that loses its connection at
// from s and retries every wait s, failing (refused as fail says), until
// up s, when it connects; up < 0: never.
func retrying(from, up, wait float64, end float64, fail auditfmt.FailureClass) []Event {
	evs := []Event{unitEvent(from, auditfmt.Disconnected, 0, 0)}
	a, t := int64(0), from
	for ; (up < 0 || t+wait < up) && t+wait <= end; t += wait {
		evs = append(evs, unitEvent(t, auditfmt.BackoffWait, a, wait))
		a++
		e := unitEvent(t+wait, auditfmt.Refused, a, wait)
		e.Fail = fail
		evs = append(evs, e)
	}
	if up >= 0 {
		evs = append(evs, unitEvent(t, auditfmt.BackoffWait, a, up-t), unitEvent(up, auditfmt.Connected, 0, up-t))
	}
	return evs
}

func TestStarvationBound(t *testing.T) {
	st := &FleetStats{Recovered: 11, TTR50: 110 * time.Second, TTR99: 400 * time.Second}
	b := newStarveBound(st, ptr(DurationsOf(20*time.Second)), StarveFloor)
	if b.late != 330*time.Second || b.never != 150*time.Second || b.p99 != 0 {
		t.Errorf("11 recovered: bound %+v, want late 330 s (3 × 110 s), never 150 s (110 s + 2 × 20 s), no p99", b)
	}
	st.Recovered = starveP99From
	if b := newStarveBound(st, ptr(DurationsOf(20*time.Second)), StarveFloor); b.late != 400*time.Second {
		t.Errorf("100 recovered: bound %+v, want the 99th percentile, 400 s", b)
	}
	if b := newStarveBound(&FleetStats{TTR50: time.Second}, ptr(DurationsOf(time.Second)), StarveFloor); b.late != StarveFloor || b.never != StarveFloor {
		t.Errorf("a fast fleet: bound %+v, want the floor %v", b, StarveFloor)
	}
}

func TestStarvationDevices(t *testing.T) {
	// 10 devices recover at 60..150 s, and "late" at 400 s, all retrying
	// every 20 s: the median is 110 s, so the bounds are 330 s for a
	// device that recovered and 150 s for one that did not.
	var devs []*Device
	for i := range 10 {
		devs = append(devs, unitDevice(fmt.Sprintf("dev-%04d", i), retrying(0, 60+10*float64(i), 20, 1e9, auditfmt.FailTransient)...))
	}
	devs = append(devs,
		unitDevice("late", retrying(0, 400, 20, 1e9, auditfmt.FailOverload)...),
		unitDevice("never", retrying(0, -1, 20, 400, auditfmt.FailAuth)...),
		unitDevice("recent", append(retrying(0, 60, 20, 1e9, auditfmt.FailTransient), retrying(300, -1, 20, 400, auditfmt.FailTransient)...)...),
		unitDevice("stopped", append(retrying(0, -1, 20, 200, auditfmt.FailAuth), unitEvent(200, auditfmt.Stopped, 10, 0))...))
	_, got := runRule(&starvation{floor: StarveFloor}, unitT0+nanos(400), devs...)
	flagged := map[string]Severity{}
	for _, f := range got {
		flagged[f.Device] = f.Severity
	}
	want := map[string]Severity{"late": Warning, "never": Error, Fleet: Warning}
	if fmt.Sprint(flagged) != fmt.Sprint(want) {
		t.Errorf("flagged %v, want %v:%s", flagged, want, describe(got))
	}
	for _, f := range got {
		if f.Device == Fleet && !strings.Contains(f.Message, "2 devices starved: 1 never recovered, 1 recovered late") {
			t.Errorf("fleet finding: %s", f.Message)
		}
	}
}

func TestStarvationMostlyDown(t *testing.T) {
	devs := []*Device{unitDevice("a", retrying(0, 60, 20, 1e9, auditfmt.FailTransient)...), unitDevice("b", retrying(0, 70, 20, 1e9, auditfmt.FailTransient)...)}
	for _, id := range []string{"c", "d", "e"} {
		devs = append(devs, unitDevice(id, retrying(0, -1, 20, 900, auditfmt.FailAuth)...))
	}
	c, got := runRule(&starvation{floor: StarveFloor}, 0, devs...)
	if len(got) > 0 {
		t.Errorf("2 of 5 recovered: want no finding:%s", describe(got))
	}
	if len(c.notes) != 1 || !strings.Contains(c.notes[0], "only 2 of the 5") {
		t.Errorf("notes %q, want one saying why", c.notes)
	}
}

// TestStarvationKinds: each way of starving is a kind of its own (a
// device that recovered late, one that never recovered, one that never
// connected, one that restarted and never connected again, and the
// fleet's sum), so a baseline that accepts one does not hide another.
func TestStarvationKinds(t *testing.T) {
	var devs []*Device
	for i := range 10 {
		devs = append(devs, unitDevice(fmt.Sprintf("dev-%04d", i), retrying(0, 60+10*float64(i), 20, 1e9, auditfmt.FailTransient)...))
	}
	fresh := retrying(0, -1, 20, 400, auditfmt.FailTransient)[1:] // no disconnect: the device is starting
	restarted := append([]Event{unitEvent(0, auditfmt.BackoffWait, 0, 1), unitEvent(1, auditfmt.Connected, 0, 1),
		unitEvent(2, auditfmt.Stopped, 0, 0)}, retrying(3, -1, 20, 400, auditfmt.FailTransient)[1:]...)
	devs = append(devs,
		unitDevice("late", retrying(0, 400, 20, 1e9, auditfmt.FailOverload)...),
		unitDevice("never", retrying(0, -1, 20, 400, auditfmt.FailAuth)...),
		unitDevice("fresh", fresh...),
		unitDevice("restarted", restarted...))
	_, got := runRule(&starvation{floor: StarveFloor}, unitT0+nanos(400), devs...)
	kinds := map[string]string{}
	for _, f := range got {
		kinds[f.Device] = f.Kind
	}
	want := map[string]string{"late": "starvation/late-recovery", "never": "starvation/never-recovered", "fresh": "starvation/never-connected",
		"restarted": "starvation/no-connect-after-restart", Fleet: "starvation/fleet-starved"}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("kinds %v, want %v:%s", kinds, want, describe(got))
	}
}

// TestBadAuthStarves checks that the devices with bad credentials,
// which never recover, are exactly the ones starvation flags, as errors,
// and that silent-give-up leaves them alone: their last backoff_wait
// opens past the end of the log.
func TestBadAuthStarves(t *testing.T) {
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

// TestFixedCapacityStarves checks a fixed-timer fleet against a
// broker that accepts one connect a second: every round one device gets
// in and the rest are refused again; those still refused at the end of
// the log starved.
func TestFixedCapacityStarves(t *testing.T) {
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
