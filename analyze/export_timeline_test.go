package analyze

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
)

const timelineLog = `{"client_id":"dev-b","attempt":0,"backoff_delay_s":0.0,"outcome":"disconnected","clean_session":false,"recorded_at":"2026-11-30T14:17:30+00:00"}
{"client_id":"dev-a","attempt":0,"backoff_delay_s":0.0,"outcome":"disconnected","clean_session":false,"recorded_at":"2026-11-30T14:17:30+00:00"}
{"client_id":"dev-a","attempt":0,"backoff_delay_s":2.5,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:30+00:00"}
{"client_id":"dev-a","attempt":0,"backoff_delay_s":0.0,"outcome":"connected","clean_session":false,"recorded_at":"2026-11-30T14:17:32.6+00:00"}
{"client_id":"other","attempt":0,"backoff_delay_s":0.0,"outcome":"connected","clean_session":false,"recorded_at":"2026-11-30T14:17:30+00:00"}
`

func timelineDataset(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "log.ndjson")
	if err := os.WriteFile(in, []byte(timelineLog), 0o644); err != nil {
		t.Fatal(err)
	}
	checkFiles(t, dir, nil, in)
	return filepath.Join(dir, "ds")
}

func TestTimeline(t *testing.T) {
	ds := timelineDataset(t)
	d, sources, err := Timeline(ds, "dev-a")
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != "dev-a" || len(d.Events) != 3 || len(d.Attempts) != 1 || len(d.Sessions) != 1 || len(d.Episodes) != 1 {
		t.Fatalf("got %+v", d)
	}
	if d.Events[1].Outcome != auditfmt.BackoffWait || d.Events[1].Ref.Line != 3 {
		t.Errorf("event 1 = %+v, want the backoff_wait of line 3", d.Events[1])
	}
	if src := sources[d.Events[0].Ref.Source]; filepath.Base(src) != "log.ndjson" {
		t.Errorf("source = %q, want .../log.ndjson", src)
	}
	if a := d.Attempts[0]; a.Open-a.Start != 2_500_000_000 {
		t.Errorf("socket-open = %d, want start + 2.5 s", d.Attempts[0].Open)
	}
}

func TestTimelineNoDevice(t *testing.T) {
	ds := timelineDataset(t)
	_, _, err := Timeline(ds, "dev-c")
	var nd *NoDeviceError
	if !errors.As(err, &nd) {
		t.Fatalf("err = %v, want a *NoDeviceError", err)
	}
	if nd.Devices != 3 || !slices.Equal(nd.Near, []string{"dev-a", "dev-b"}) {
		t.Errorf("got %+v, want 3 devices, near dev-a, dev-b", nd)
	}
	const want = `device "dev-c" is not in the dataset (3 devices; the nearest: dev-a, dev-b)`
	if err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestDeviceIDs(t *testing.T) {
	ids, err := DeviceIDs(timelineDataset(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dev-a", "dev-b", "other"}; !slices.Equal(ids, want) {
		t.Errorf("DeviceIDs = %q, want %q", ids, want)
	}
}

// TestNearIDs: dev-41 suggests dev-0041 before dev-0001 (issue 26: it
// suggested dev-0001..dev-0003, which share the prefix dev- as much).
func TestNearIDs(t *testing.T) {
	var n nearIDs
	for i := 1; i <= 60; i++ {
		n.add("dev-41", fmt.Sprintf("dev-%04d", i))
	}
	if len(n.ids) == 0 || n.ids[0] != "dev-0041" {
		t.Errorf("near dev-41: %v, want dev-0041 first", n.ids)
	}
}
