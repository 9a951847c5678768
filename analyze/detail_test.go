package analyze

import (
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

// TestDetailsMergeByDevice checks a fleet whose incidents have devices
// that never came back, that met refusals and failures, and that were
// not served in time, with one core and with three: whyAndWho deals each
// incident's devices out to the cores and merges their details, and the
// result must not depend on how many there were.
func TestDetailsMergeByDevice(t *testing.T) {
	cfg := simulate.Config{Devices: 600, Outage: 60 * time.Second, Seed: 5,
		Policy: *declaredPreset(t, "full-jitter", ""), BadAuth: 0.05, Flaps: 1, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second,
		ServiceDown: 20 * time.Second}
	dir, _ := simDataset(t, cfg)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(1)
	want, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var unrecovered, unserved, met int
	for _, in := range want.Summary.Fleet.Incidents {
		unrecovered, unserved, met = unrecovered+len(in.Unrecovered), unserved+len(in.Unserved), met+len(in.Met)
	}
	if unrecovered == 0 || unserved == 0 || met == 0 {
		t.Fatalf("%d devices never back, %d not served, %d kinds met: the merge is not tested", unrecovered, unserved, met)
	}
	runtime.GOMAXPROCS(3)
	got, err := Check(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("three cores differ from one:\n%s", resultDiff(got, want))
	}
}
