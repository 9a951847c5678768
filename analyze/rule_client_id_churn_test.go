package analyze

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/simulate"
)

func TestClientIDChurn(t *testing.T) {
	// id returns a device on host whose records run from a to b seconds,
	// the last being last.
	id := func(name, host string, a, b float64, last auditfmt.Outcome, clean bool) *Device {
		d := unitDevice(name, unitEvent(a, auditfmt.Disconnected, 0, 0), unitEvent(a, auditfmt.BackoffWait, 0, b-a), unitEvent(b, last, 1, b-a))
		d.Host = host
		for i := range d.Events {
			d.Events[i].Clean = clean
		}
		return d
	}
	const (
		failed = auditfmt.AttemptFailed
		up     = auditfmt.Connected
	)
	tests := []struct {
		name string
		devs []*Device
		want string // the device flagged, "" for none
	}{
		{"in turn", []*Device{id("c-1", "h", 0, 10, failed, false), id("c-2", "h", 15, 30, failed, false), id("c-3", "h", 35, 40, up, false)}, "c-3"},
		{"at the same time", []*Device{id("c-1", "h", 0, 10, failed, false), id("c-2", "h", 5, 30, up, false)}, ""},
		{"touching", []*Device{id("c-1", "h", 0, 10, failed, false), id("c-2", "h", 10, 30, up, false)}, ""},
		{"the first still connected", []*Device{id("c-1", "h", 0, 10, up, false), id("c-2", "h", 1200, 1230, up, false)}, ""},
		{"clean sessions", []*Device{id("c-1", "h", 0, 10, failed, true), id("c-2", "h", 15, 30, up, true)}, ""},
		{"two hosts", []*Device{id("c-1", "h1", 0, 10, failed, false), id("c-2", "h2", 15, 30, up, false)}, ""},
		{"no host_id", []*Device{id("c-1", "", 0, 10, failed, false), id("c-2", "", 15, 30, up, false)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, got := runRule(&clientIDChurn{}, 0, tc.devs...)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("want no finding:%s", describe(got))
			case tc.want != "" && (len(got) != 1 || got[0].Device != tc.want):
				t.Errorf("want one finding on %s:%s", tc.want, describe(got))
			}
		})
	}
}

// TestChurnedHost renames a device of a gateway after a flap drops
// its session, as a client that restarts under a fresh client id does.
func TestChurnedHost(t *testing.T) {
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
