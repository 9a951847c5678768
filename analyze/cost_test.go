package analyze

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stormaudit/stormaudit/policy"
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

// TestCostFromRealClients: real Python paho clients with bounded
// outboxes, running a commander's commands that expire, through a silent
// link and a kill (testdata/realclients/paho-py-outbox). Each incident's
// cost is what the devices' own counts add up to, summed here apart:
// a device's k-th disconnected record begins its k-th loss, its counts
// are of the time before it, and those of every record after it are the
// k-th loss's, until the next.
func TestCostFromRealClients(t *testing.T) {
	dir := filepath.Join("..", "testdata", "realclients", "paho-py-outbox")
	pol, err := policy.Load(filepath.Join(dir, "policy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	res := checkFilesWith(t, t.TempDir(), Options{Policy: &pol}, filepath.Join(dir, "clients.ndjson"))
	incs := res.Summary.Fleet.Incidents
	if len(incs) != 2 {
		t.Fatalf("%d incidents, want 2: the silent link and the kill", len(incs))
	}
	b, err := os.ReadFile(filepath.Join(dir, "clients.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var want [2][costKinds]Cost
	losses := map[string]int{} // disconnected records seen, by device
	counted := [2][costKinds]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct{ Device, Outcome string }
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		r.Device, r.Outcome = m["client_id"].(string), m["outcome"].(string)
		k := losses[r.Device] - 1 // the loss this record's counts are of
		if r.Outcome == "disconnected" {
			losses[r.Device]++
		}
		if k < 0 || k > 1 {
			continue
		}
		for c := range costKinds {
			v, ok := m[CostField(c)].(float64)
			if !ok {
				continue
			}
			if counted[k][c] == nil {
				counted[k][c] = map[string]bool{}
			}
			w := &want[k][c]
			w.Messages += int64(v)
			if _, seen := counted[k][c][r.Device]; !seen {
				counted[k][c][r.Device] = false
				w.Reporting++
			}
			if v > 0 && !counted[k][c][r.Device] {
				counted[k][c][r.Device] = true
				w.Devices++
			}
		}
	}
	for k := range incs {
		if incs[k].Cost != want[k] {
			t.Errorf("incident %d: cost %+v, the devices' own counts %+v", k+1, incs[k].Cost, want[k])
		}
	}
	if want[0][CostExpired].Messages == 0 || want[1][CostDropped].Messages == 0 {
		t.Errorf("the recording's counts %+v: no command expired after the silent link, or no measurement dropped in the kill", want)
	}
}
