package analyze

import (
	"slices"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

// TestSurveyHandMade checks Survey on fleetLog (see TestFleetStatsHandMade):
// the failed opens at 0.2, 0.4, 0.6, 0.8 and 2.85 s, the connected ones
// at 0.95, 1.95, 2.95 and 3.95 s.
func TestSurveyHandMade(t *testing.T) {
	res := checkLog(t, fleetLog(-1), nil)
	o, err := Survey(res.Dataset, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Result.Findings) != len(res.Findings) {
		t.Errorf("Survey found %d findings, Check %d", len(o.Result.Findings), len(res.Findings))
	}
	t0 := auditStart.UnixNano()
	hist := o.Activity.Histogram(t0, time.Second, 5)
	var conn, fail, total, connects []int
	for _, b := range hist {
		conn, fail = append(conn, b.Opens[OpenConnected]), append(fail, b.Opens[OpenFailed]+b.Opens[OpenRefused])
		total, connects = append(total, b.Total()), append(connects, b.Connects)
	}
	if !slices.Equal(total, []int{5, 1, 2, 1, 0}) || !slices.Equal(conn, []int{1, 1, 1, 1, 0}) || !slices.Equal(fail, []int{4, 0, 1, 0, 0}) {
		t.Errorf("opens per second %v, connected %v, failed %v; want [5 1 2 1 0], [1 1 1 1 0], [4 0 1 0 0]", total, conn, fail)
	}
	if slices.Equal(connects, []int{0, 0, 0, 0, 0}) || sum(connects) != 4 {
		t.Errorf("connects per second %v, want 4 in all", connects)
	}
	if hist[1].Start != t0+int64(time.Second) {
		t.Errorf("bucket 1 starts at %d, want %d", hist[1].Start, t0+int64(time.Second))
	}
	if len(o.Devices) != 5 {
		t.Fatalf("%d devices, want 5", len(o.Devices))
	}
	d4, d5 := o.Devices[o.Device("dev-4")], o.Devices[o.Device("dev-5")]
	if d4.Attempts != 2 || d4.Failed != 1 || d4.Losses != 1 || d4.TTR != 4*time.Second || d4.Down {
		t.Errorf("dev-4: %+v; want 2 attempts, 1 failed, 1 loss, TTR 4s, up", d4)
	}
	if d5.Attempts != 2 || d5.Failed != 2 || d5.Losses != 1 || d5.TTR != -1 || !d5.Down {
		t.Errorf("dev-5: %+v; want 2 attempts, 2 failed, 1 loss, no TTR, down", d5)
	}
	if got := o.Active(t0+2*int64(time.Second), t0+3*int64(time.Second)); len(got) != 2 ||
		o.Devices[got[0]].ID != "dev-3" || o.Devices[got[1]].ID != "dev-5" {
		t.Errorf("active in [2s, 3s): %v, want dev-3 and dev-5", got)
	}
	if o.Device("dev-0") != -1 {
		t.Error("Device(dev-0) found a device")
	}
}

// TestSurveyMatchesFleetStats compares Survey's activity and figures with
// the check's fleet statistics on a simulated fleet.
func TestSurveyMatchesFleetStats(t *testing.T) {
	dir, _ := simDataset(t, simulate.Config{Devices: 300, Outage: 20 * time.Second, Policy: simPreset(t, "full-jitter"), Seed: 9,
		Capacity: 50, BadAuth: 0.05})
	o, err := Survey(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := o.Result.Summary.Fleet
	if int64(len(o.Activity.Opens)) != st.Attempts {
		t.Fatalf("%d opens, FleetStats %d", len(o.Activity.Opens), st.Attempts)
	}
	hist := o.Activity.Histogram(st.First, st.Window, len(st.PerWindow))
	for i, b := range hist {
		if int64(b.Total()) != st.PerWindow[i] {
			t.Fatalf("window %d: %d opens, FleetStats %d", i, b.Total(), st.PerWindow[i])
		}
	}
	var attempts, findings int
	var ttr time.Duration
	for _, f := range o.Devices {
		attempts, findings, ttr = attempts+f.Attempts, findings+f.Findings, max(ttr, f.TTR)
	}
	if int64(attempts) != st.Attempts || ttr != st.TTRMax || len(o.Devices) != st.Devices {
		t.Errorf("devices' attempts %d, longest TTR %v, devices %d; FleetStats %d, %v, %d", attempts, ttr, len(o.Devices), st.Attempts, st.TTRMax, st.Devices)
	}
	var about int
	for _, f := range o.Result.Findings {
		if f.Device != Fleet {
			about++
		}
	}
	if about == 0 {
		t.Fatal("the simulated fleet has no findings about devices: nothing to count")
	}
	if findings != about {
		t.Errorf("devices' findings %d, want %d", findings, about)
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// The fleet's activity holds the outbox flushes the fleet figures count:
// a histogram over the whole log sums to FleetStats.Flushed.
func TestActivityFlushes(t *testing.T) {
	dir, _ := simDataset(t, simulate.Config{Devices: 100, Outage: time.Minute, Seed: 2, OutboxPerS: 2,
		Policy: *declaredPreset(t, "full-jitter", ""), Flaps: 1, FlapUp: 5 * time.Second, FlapDown: 10 * time.Second})
	ov, err := Survey(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, last, ok := ov.Activity.Span()
	if !ok {
		t.Fatal("no activity")
	}
	first = min(first, ov.Activity.Flushes[0].At)
	var sum int64
	for _, b := range ov.Activity.Histogram(first, time.Second, int((last-first)/int64(time.Second))+2) {
		sum += b.Flushed
	}
	if want := ov.Result.Summary.Fleet.Flushed; sum != want || want == 0 {
		t.Errorf("histogram flushed %d, the fleet figures %d (want them equal, above 0)", sum, want)
	}
}
