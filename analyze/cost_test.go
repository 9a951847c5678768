package analyze

import (
	"fmt"
	"testing"
	"unsafe"
)

// TestIncidentCost: two incidents of 20 devices. Each record's counts go
// to the last loss before it, the counts of the record that begins the
// next loss included (they are of the time before it), and those of the
// record that begins a loss to the one before; a device that records a
// field with 0 reports it without counting.
func TestIncidentCost(t *testing.T) {
	log := metLog(20, func(i int, rec func(string, float64, int, float64, string)) {
		opt := func(ok bool, f string, n int) string {
			if !ok {
				return ""
			}
			return fmt.Sprintf(`,%q:%d`, f, n)
		}
		rec("disconnected", 10, 0, 0, `,"outbox_dropped":7,"inbound_duplicates":3`) // before the loss: no incident's
		rec("backoff_wait", 10, 0, 2, opt(i%2 == 0, "outbox_dropped", 3))
		rec("connected", 12, 0, 0, opt(i%2 == 0, "outbox_dropped", 2)+opt(i%4 == 0, "inbound_expired", 4))
		rec("disconnected", 100, 0, 0, `,"outbox_dropped":0`+opt(i%5 == 0, "inbound_duplicates", 1))
		rec("backoff_wait", 100, 0, 1, "")
		rec("connected", 101, 0, 0, opt(i == 0, "outbox_dropped", 9))
	})
	res := checkLog(t, log, nil)
	incs := res.Summary.Fleet.Incidents
	if len(incs) != 2 {
		t.Fatalf("%d incidents, want 2", len(incs))
	}
	want := [2][costKinds]Cost{
		{CostDropped: {50, 10, 20}, CostExpired: {20, 5, 5}, CostTwice: {4, 4, 4}},
		{CostDropped: {9, 1, 1}},
	}
	for k := range incs {
		if incs[k].Cost != want[k] {
			t.Errorf("incident %d: cost %+v, want %+v", k+1, incs[k].Cost, want[k])
		}
	}
}

// An Event holds the costs in what was padding: the analyzers hold
// millions (docs/performance.md).
func TestEventSize(t *testing.T) {
	if got := unsafe.Sizeof(Event{}); got != 120 {
		t.Errorf("Event is %d bytes, want 120", got)
	}
}
