package analyze

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// skewLog returns the real-client log of scenario name with every record
// of each device whose number is a multiple of 4 stamped off seconds
// later (a quarter of the fleet's clocks running ahead), and those
// devices.
func skewLog(t *testing.T, name string, off time.Duration) (string, map[string]bool) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "realclients", name, "clients.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	skewed := map[string]bool{}
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		id := rec["client_id"].(string)
		if n, _ := strconv.Atoi(id[strings.LastIndexByte(id, '-')+1:]); n%4 == 0 {
			at, err := time.Parse(time.RFC3339Nano, rec["recorded_at"].(string))
			if err != nil {
				t.Fatal(err)
			}
			rec["recorded_at"] = at.Add(off).UTC().Format(time.RFC3339Nano)
			skewed[id] = true
		}
		line, _ := json.Marshal(rec)
		b.Write(append(line, '\n'))
	}
	return b.String(), skewed
}

// TestClockOffsetsFromLosses: a quarter of a real fleet's clocks 4 s
// ahead leaves one incident, with the same figures as the true clocks
// give, and names exactly those devices, each within 0.6 s of 4 s.
func TestClockOffsetsFromLosses(t *testing.T) {
	for _, name := range []string{"paho-py-manual", "paho-go"} {
		log, skewed := skewLog(t, name, 4*time.Second)
		truth, _ := skewLog(t, name, 0)
		got, want := checkLog(t, log, nil).Summary.Fleet, checkLog(t, truth, nil).Summary.Fleet
		if len(got.Incidents) != 1 || len(want.Incidents) != 1 {
			t.Fatalf("%s: %d incidents skewed, %d true, want 1", name, len(got.Incidents), len(want.Incidents))
		}
		g, w := got.Incidents[0], want.Incidents[0]
		if g.DevicesLost != w.DevicesLost || g.Recovered != w.Recovered || abs64(g.LostAt-w.LostAt) > int64(100*time.Millisecond) ||
			abs64(g.FirstConnectAt-w.FirstConnectAt) > int64(100*time.Millisecond) || (g.TTR50-w.TTR50).Abs() > 600*time.Millisecond ||
			(g.ConnectsPeak-w.ConnectsPeak) > 2 || (w.ConnectsPeak-g.ConnectsPeak) > 2 {
			t.Errorf("%s: skewed incident %+v,\ntrue one %+v", name, g, w)
		}
		t.Logf("%s: incident lost at %s, %d lost, %d corrected, %d offsets", name, timeText(g.LostAt), g.DevicesLost, g.Corrected, len(got.ClockOffsets))
		if g.Corrected == 0 {
			t.Errorf("%s: the incident says no device was corrected", name)
		}
		found := map[string]bool{}
		for _, o := range got.ClockOffsets {
			found[o.Device] = true
			if !skewed[o.Device] || (o.Offset-4*time.Second).Abs() > 600*time.Millisecond || o.Resolution > 600*time.Millisecond {
				t.Errorf("%s: offset %+v, want 4s on a skewed device", name, o)
			}
		}
		if len(found) != g.Corrected || len(found) < len(skewed)*8/10 {
			t.Errorf("%s: %d offsets found, %d devices corrected, %d skewed", name, len(found), g.Corrected, len(skewed))
		}
		if len(want.ClockOffsets) != 0 {
			t.Errorf("%s: true clocks give offsets %+v", name, want.ClockOffsets[0])
		}
	}
}
