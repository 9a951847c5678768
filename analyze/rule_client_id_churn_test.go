package analyze

import (
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
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
