package analyze

import (
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/simulate"
)

// TestTimeToFirstUsefulService: a broker back after 30 s whose
// application stayed down 40 s more. Every device reconnected, and each
// was served only once the application was back: its time to first
// useful service is at least 70 s, and those that reconnected more than
// ServiceLag before that are connected but not served. Without the
// service stage no figure of service is made up.
func TestTimeToFirstUsefulService(t *testing.T) {
	const n = 150
	pol := simPreset(t, "full-jitter")
	ds, _ := simDataset(t, simulate.Config{Devices: n, Outage: 30 * time.Second, Policy: pol, ServiceDown: 40 * time.Second, Seed: 5})
	res, err := Check(ds, Options{Policy: &pol})
	if err != nil {
		t.Fatal(err)
	}
	incs := res.Summary.Fleet.Incidents
	if len(incs) != 1 {
		t.Fatalf("%d incidents, want 1", len(incs))
	}
	in := &incs[0]
	if in.ServiceDevices != n || in.Served != in.Recovered || in.Recovered != n {
		t.Errorf("%d devices record the service, %d served, %d recovered; want all %d", in.ServiceDevices, in.Served, in.Recovered, n)
	}
	back := in.LostAt + int64(70*time.Second)
	if len(in.Unserved) == 0 {
		t.Error("no device connected but not served, with the application down 40 s after the broker")
	}
	for _, u := range in.Unserved {
		if u.Served < back || u.Served-u.Reconnected <= int64(ServiceLag) {
			t.Errorf("%+v: served before the application was back, or within the lag", u)
		}
	}
	if in.TTS50 < 70*time.Second || in.TTS50 < in.TTR50 {
		t.Errorf("time to service p50 %v, to reconnect p50 %v: want service at least 70 s and after the reconnect", in.TTS50, in.TTR50)
	}
	ds2, _ := simDataset(t, simulate.Config{Devices: n, Outage: 30 * time.Second, Policy: pol, Seed: 5})
	res2, err := Check(ds2, Options{Policy: &pol})
	if err != nil {
		t.Fatal(err)
	}
	if in2 := &res2.Summary.Fleet.Incidents[0]; in2.ServiceDevices != 0 || in2.Unserved != nil || in2.TTS50 != 0 {
		t.Errorf("no service stage recorded, and yet %+v", in2)
	}
}
