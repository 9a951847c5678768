package analyze

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/ingest"

	"github.com/stormaudit/stormaudit/simulate"
)

// TestReadDeviceMatchesScan reads every device of real clients' logs and
// of a simulated fleet split over many files through ReadDevice, and
// compares each with the device the full scan (Timeline) builds.
func TestReadDeviceMatchesScan(t *testing.T) {
	dirs := map[string]string{}
	for _, name := range []string{"paho-go", "paho-py-library", "paho-py-manual"} {
		dirs[name] = ingestFiles(t, 0, filepath.Join("..", "testdata", "realclients", name, "clients.ndjson"))
	}
	var sim []byte
	if _, err := simulate.Run(context.Background(), simulate.Config{Devices: 150, Outage: 20 * time.Second, Policy: simPreset(t, "full-jitter"),
		Seed: 5, Capacity: 40, Flaps: 1, FlapUp: 3 * time.Second, FlapDown: 5 * time.Second}, (*bytesWriter)(&sim)); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "sim.ndjson")
	if err := os.WriteFile(in, sim, 0o644); err != nil {
		t.Fatal(err)
	}
	dirs["simulated, many files"] = ingestFiles(t, 2000, in)
	for name, dir := range dirs {
		ids, err := DeviceIDs(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			want, wantSources, err := Timeline(dir, id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadDevice(dir, id)
			if err != nil {
				t.Fatalf("%s: %s: %v", name, id, err)
			}
			if !reflect.DeepEqual(noNaN(got.Device), noNaN(want)) {
				t.Fatalf("%s: %s: ReadDevice and Timeline differ:\n%+v\n%+v", name, id, got.Device, want)
			}
			if !reflect.DeepEqual(got.Sources, wantSources) {
				t.Fatalf("%s: %s: sources %q, want %q", name, id, got.Sources, wantSources)
			}
			for i, e := range got.Device.Events {
				r := got.Rows[i]
				if r.File != int(e.Ref.File) || r.Row != e.Ref.Row || r.Record.Line != e.Ref.Line || r.Record.ClientID != id {
					t.Fatalf("%s: %s: row %d (file %d row %d) is not event %d's (%+v)", name, id, i, r.File, r.Row, i, e.Ref)
				}
			}
		}
	}
	_, err := ReadDevice(dirs["paho-go"], "no-such-device")
	var nd *NoDeviceError
	if !errors.As(err, &nd) || nd.Error() != `device "no-such-device" is not in the dataset` {
		t.Fatalf("err = %v, want a NoDeviceError", err)
	}
}

// ingestFiles ingests files into a dataset, starting a new file every
// fileRows rows (0: the default), and returns its directory.
func ingestFiles(t *testing.T, fileRows int64, files ...string) string {
	t.Helper()
	var srcs []ingest.Source
	for _, f := range files {
		srcs = append(srcs, ingest.Source{Name: f})
	}
	ds := filepath.Join(t.TempDir(), "ds")
	if _, err := ingest.Run(context.Background(), ds, srcs, ingest.Options{FileRows: fileRows}); err != nil {
		t.Fatal(err)
	}
	return ds
}

// noNaN returns a copy of d whose absent ceilings are -1, which
// reflect.DeepEqual can compare.
func noNaN(d *Device) *Device {
	c := d.clone()
	for i := range c.Events {
		if math.IsNaN(c.Events[i].Ceiling) {
			c.Events[i].Ceiling = -1
		}
	}
	for i := range c.Attempts {
		if math.IsNaN(c.Attempts[i].Ceiling) {
			c.Attempts[i].Ceiling = -1
		}
	}
	return c
}

type bytesWriter []byte

func (b *bytesWriter) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }
