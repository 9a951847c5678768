package analyze

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/ingest"
)

// skewedBootLog writes 40 devices that boot within one second (each
// opens its first socket 0.1 s after its backoff_wait), of which every
// fourth stamps its records 4 s ahead, and that all lose the broker at
// 100 s and come back over the next 20 s: the incident shows the offsets.
func skewedBootLog() string {
	var b strings.Builder
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for i := range 40 {
		id := fmt.Sprintf("dev-%02d", i+1)
		skew := 0.0
		if i%4 == 0 {
			skew = 4
		}
		rec := func(outcome string, at float64, attempt int, delay float64) {
			fmt.Fprintf(&b, `{"client_id":%q,"attempt":%d,"backoff_delay_s":%g,"outcome":%q,"clean_session":false,"recorded_at":%q}`+"\n",
				id, attempt, delay, outcome, t0.Add(time.Duration((at+skew)*1e9)).Format(time.RFC3339Nano))
		}
		boot := float64(i) * 0.02
		rec("backoff_wait", boot, 0, 0.1)
		rec("connected", boot+0.15, 0, 0)
		rec("disconnected", 100+float64(i)*0.001, 0, 0)
		back := 100 + float64(i)*0.5
		rec("backoff_wait", 100.01+float64(i)*0.001, 0, back-100.01-float64(i)*0.001)
		rec("connected", back+0.05, 0, 0)
	}
	return b.String()
}

// TestOffsetsMoveEveryRule: once the incident shows some clocks 4 s
// ahead, the boot is judged on corrected times (all 40 first sockets in
// one second, not 30 and 10 four seconds apart), and the fleet's
// activity is on the fleet's clock.
func TestOffsetsMoveEveryRule(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "log.ndjson")
	if err := os.WriteFile(in, []byte(skewedBootLog()), 0o644); err != nil {
		t.Fatal(err)
	}
	ds := filepath.Join(dir, "ds")
	if _, err := ingest.Run(context.Background(), ds, []ingest.Source{{Name: in}}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	ov, err := Survey(ds, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ov.Result.Summary.Fleet.ClockOffsets); n != 10 {
		t.Fatalf("%d clock offsets, want the 10 devices 4 s ahead", n)
	}
	fs := of(ov.Result, startupStormID)
	if len(fs) != 1 || !strings.HasPrefix(fs[0].Message, "40 of 40 devices") {
		t.Errorf("startup-storm: %s; want all 40 first sockets in one second, on corrected clocks", describe(fs))
	}
	first, _, _ := ov.Activity.Span()
	h := ov.Activity.Histogram(first, time.Second, 2)
	if h[0].Total() != 40 {
		t.Errorf("the first second of the fleet's activity holds %d socket-opens, want all 40 of the boot", h[0].Total())
	}
	// a budget of 35 connects a second: the boot's 40 in one second break
	// it on corrected clocks (30 and 10, four seconds apart, would not)
	pol := *mustPolicy(t, "delay = \"full_jitter\"\nbase_delay_s = 1\nmultiplier = 2\nmax_delay_s = 60\nconnect_budget_per_s = 35\n")
	res, err := Check(ds, Options{Policy: &pol})
	if err != nil {
		t.Fatal(err)
	}
	if fs := of(res, "connect-budget"); len(fs) != 1 || !strings.HasPrefix(fs[0].Message, "40 socket-opens") {
		t.Errorf("connect-budget: %s; want the boot's 40 socket-opens in one second, on corrected clocks", describe(fs))
	}
}

// TestMidpointResolution: an estimate's middle is said no finer than it
// resolves (issue 36: lost_at with seven decimals).
func TestMidpointResolution(t *testing.T) {
	for _, tc := range []struct{ lo, hi, want int64 }{
		{1_000_000_001_000, 1_000_000_002_000, 1_000_000_001_000},                // 1 µs apart: the µs
		{1_000_000_000_000, 1_004_000_003_000, 1_002_000_000_000},                // seconds apart: the ms
		{-1_000_000_000_000 - 3_000_000, -1_000_000_000_000, -1_000_002_000_000}, // before 1970: floored
	} {
		if got := midpoint(tc.lo, tc.hi); got != tc.want {
			t.Errorf("midpoint(%d, %d) = %d, want %d", tc.lo, tc.hi, got, tc.want)
		}
	}
}
