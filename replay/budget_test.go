package replay

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBudget: a plan's needs of the machine, one descriptor a device and
// two with the embedded broker (and the busiest second's dropped
// connections), ports with TIME_WAIT where it holds them, memory; a plan
// that does not fit is refused with the --devices that does, and that
// count is the largest that fits.
func TestBudget(t *testing.T) {
	p := spread(600, 10*time.Second) // 60 connects a second
	m := Machine{Descriptors: 1000, Ports: 28232, TimeWaitReuse: 2, Memory: 8 << 30}
	for _, tc := range []struct {
		name           string
		addr           string
		embedded       bool
		m              Machine
		fds, ports     int
		want, wantMore string // in the error; "" when it fits
	}{
		{"embedded", "127.0.0.1:0", true, m, 2*600 + 60 + 256, 600, "1516 descriptors", "--devices 350"},
		{"external on loopback", "127.0.0.1:1883", false, m, 600 + 256, 600, "", ""},
		{"remote, TIME_WAIT", "192.0.2.1:1883", false, Machine{Descriptors: 1000, Ports: 1000, TimeWaitReuse: 0}, 856, 1200,
			"1200 local ports to the broker (1 a device, and 600 held in TIME_WAIT", "--devices 500"},
		{"remote, reuse", "192.0.2.1:1883", false, Machine{Descriptors: 1000, Ports: 1000, TimeWaitReuse: 1}, 856, 600, "", ""},
		{"memory", "127.0.0.1:1883", false, Machine{Memory: 260 << 20, TimeWaitReuse: 2}, 856, 600, "GiB of memory", "--devices 256"},
		{"no memory", "127.0.0.1:1883", false, Machine{Memory: 200 << 20, TimeWaitReuse: 2}, 856, 600, "GiB of memory", "not one of them fits"},
		{"unknown machine", "127.0.0.1:0", true, Machine{TimeWaitReuse: -1}, 1516, 1200, "", ""},
	} {
		b := PlanBudget(p, Load{Speed: 1, Addr: tc.addr, Embedded: tc.embedded, Seed: 1}, tc.m)
		if b.Descriptors != tc.fds || b.Ports != tc.ports {
			t.Errorf("%s: needs %d descriptors, %d ports; want %d, %d", tc.name, b.Descriptors, b.Ports, tc.fds, tc.ports)
		}
		err := b.Err()
		if tc.want == "" {
			if err != nil || b.MaxDevices() != 600 {
				t.Errorf("%s: %v, at most %d devices; want it to fit", tc.name, err, b.MaxDevices())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.wantMore) {
			t.Errorf("%s: %v; want %q and %q", tc.name, err, tc.want, tc.wantMore)
		}
		if n := b.MaxDevices(); n > 0 && !b.fits(n) || b.fits(n+1) {
			t.Errorf("%s: at most %d devices, but fits(%d) %v, fits(%d) %v", tc.name, n, n, b.fits(n), n+1, b.fits(n+1))
		}
		// the count it names fits when replayed
		if n := b.MaxDevices(); n > 0 {
			s := PlanBudget(p.Sample(n, 1), Load{Speed: 1, Addr: tc.addr, Embedded: tc.embedded, Seed: 1}, tc.m)
			if err := s.Err(); err != nil {
				t.Errorf("%s: --devices %d still refused: %v", tc.name, n, err)
			}
		}
	}
	if got := fmt.Sprint(PlanBudget(p, Load{Addr: "127.0.0.1:0", Embedded: true}, m)); !strings.Contains(got, "600 devices need 1516 descriptors (have 1000)") {
		t.Errorf("String: %s", got)
	}
}

// TestBusiestWithin counts the connects due within a span at a speed.
func TestBusiestWithin(t *testing.T) {
	p := spread(100, 10*time.Second) // one every 100 ms
	for _, tc := range []struct {
		speed float64
		w     time.Duration
		want  int
	}{{1, time.Second, 10}, {2, time.Second, 20}, {1, time.Minute, 100}, {1, 50 * time.Millisecond, 1}} {
		if got := busiestWithin(p, tc.speed, tc.w); got != tc.want {
			t.Errorf("speed %g, %v: %d, want %d", tc.speed, tc.w, got, tc.want)
		}
	}
}
