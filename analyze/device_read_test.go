package analyze

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/dataset"
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

// TestEventOutboxAndAttemptKey reads the outbox and inbound fields and
// attempt_id of records through both read paths, the dataset's Arrow batches (Timeline,
// as Check reads) and its records (ReadDevice): present, absent, zero.
func TestEventOutboxAndAttemptKey(t *testing.T) {
	lines := []string{
		`{"client_id": "dev-a", "attempt": 0, "backoff_delay_s": 1.0, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:30+00:00", "attempt_id": "a-1", "outbox_depth": 4}`,
		`{"client_id": "dev-a", "attempt": 0, "backoff_delay_s": 1.0, "outcome": "connected", "clean_session": false, "recorded_at": "2026-11-30T14:17:31.2+00:00", "attempt_id": "a-1", "outbox_depth": 4, "outbox_flushed": 0, "inbound_redelivered": 0}`,
		`{"message": "m", "audit": {"client_id": "dev-a", "attempt": 0, "backoff_delay_s": 0.0, "outcome": "connected", "clean_session": false, "recorded_at": "2026-11-30T14:17:40+00:00", "outbox_depth": 0, "outbox_flushed": 9007199254740992, "inbound_redelivered": 9007199254740992, "inbound_duplicates": 7}}`,
		`{"client_id": "dev-b", "attempt": 0, "backoff_delay_s": 0.5, "outcome": "backoff_wait", "clean_session": true, "recorded_at": "2026-11-30T14:17:30+00:00", "outbox_depth": null}`,
		`{"client_id": "dev-b", "attempt": 0, "backoff_delay_s": 0.5, "outcome": "connected", "clean_session": true, "recorded_at": "2026-11-30T14:17:30.6+00:00", "attempt_id": "b-\u00e9😀", "inbound_duplicates": 0}`,
	}
	want := map[int64]eventFields{ // by input line
		1: {4, -1, -1, -1, AttemptKey("a-1")},
		2: {4, 0, 0, -1, AttemptKey("a-1")},
		3: {0, 1 << 53, 1 << 53, 7, 0},
		4: {-1, -1, -1, -1, 0},
		5: {-1, -1, -1, 0, AttemptKey("b-é😀")},
	}
	in := filepath.Join(t.TempDir(), "outbox.ndjson")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkEventFields(t, ingestFiles(t, 0, in), []string{"dev-a", "dev-b"}, func(e *Event) eventFields {
		return want[e.Ref.Line]
	})

	// A dataset written before outbox_depth and outbox_flushed were fields
	// (testdata/datasets/README.md) has no columns for them: absent.
	old := map[int64]string{2: "a-1", 3: "a-1", 4: "a-2", 5: "a-2"}
	checkEventFields(t, filepath.Join("..", "testdata", "datasets", "before-outbox"), []string{"dev-0001", "dev-0002"}, func(e *Event) eventFields {
		f := eventFields{-1, -1, -1, -1, 0}
		if id, ok := old[e.Ref.Line]; ok {
			f.key = AttemptKey(id)
		}
		return f
	})
}

// eventFields are an event's outbox and inbound fields and attempt key.
type eventFields struct {
	outbox, flushed, redelivered, dups int64
	key                                uint64
}

// checkEventFields reads the devices ids of the dataset in dir through
// Timeline and ReadDevice and checks each event's outbox fields and
// attempt key against want.
func checkEventFields(t *testing.T, dir string, ids []string, want func(*Event) eventFields) {
	t.Helper()
	for _, id := range ids {
		scanned, _, err := Timeline(dir, id)
		if err != nil {
			t.Fatal(err)
		}
		read, err := ReadDevice(dir, id)
		if err != nil {
			t.Fatal(err)
		}
		for path, d := range map[string]*Device{"Timeline": scanned, "ReadDevice": read.Device} {
			if len(d.Events) == 0 {
				t.Errorf("%s: %s: no events", path, id)
			}
			for i := range d.Events {
				e := &d.Events[i]
				if got, w := (eventFields{e.Outbox, e.Flushed, e.Redelivered, e.Duplicates, e.AttemptKey}), want(e); got != w {
					t.Errorf("%s: %s line %d: outbox, flushed, redelivered, duplicates, attempt key %v, want %v", path, id, e.Ref.Line, got, w)
				}
			}
		}
	}
}

func TestAttemptKey(t *testing.T) {
	for _, id := range []string{"", "a", "a-1", "foobar", "b-é😀", "\xff\x00", strings.Repeat("attempt-", 40)} {
		h := fnv.New64a()
		h.Write([]byte(id))
		if got, want := AttemptKey(id), max(h.Sum64(), 1); got != want {
			t.Errorf("AttemptKey(%q) = %#x, want %#x (FNV-1a 64)", id, got, want)
		}
	}
	if AttemptKey("a-1") == AttemptKey("a-2") {
		t.Error("a-1 and a-2 share a key")
	}
}

// TestEventDoesNotAllocate holds the hot path (batch.fill) to no
// allocation per row, attempt_id hashing included.
func TestEventDoesNotAllocate(t *testing.T) {
	var lines []string
	for i := range 500 {
		lines = append(lines, fmt.Sprintf(`{"client_id": "dev-%d", "attempt": 0, "backoff_delay_s": 1.0, "outcome": "backoff_wait", "clean_session": false, `+
			`"recorded_at": "2026-11-30T14:17:30+00:00", "attempt_id": "attempt-%d-%d", "outbox_depth": %d, "outbox_flushed": %d, "device_seq": %d}`,
			i%7, i%7, i, i, i/2, i))
	}
	in := filepath.Join(t.TempDir(), "many.ndjson")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := dataset.OpenArrowWith(ingestFiles(t, 0, in), dataset.ArrowOptions{Columns: readColumns, Dictionaries: dictColumns})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	b, err := newBatch(rec, &sourceTable{})
	if err != nil {
		t.Fatal(err)
	}
	n := int(rec.NumRows())
	var sum uint64
	evs := make([]Event, 0, n)
	allocs := testing.AllocsPerRun(20, func() {
		evs = b.fill(evs[:0], 0, 0)
		for i := range evs {
			sum += evs[i].AttemptKey + uint64(evs[i].Outbox)
		}
	})
	if allocs != 0 || sum == 0 {
		t.Errorf("%v allocations for %d events (sum %d)", allocs, n, sum)
	}
}

// TestEventLayout holds Event to the padding its small fields make
// unavoidable (less than 8 bytes): the analyzers keep millions of events.
func TestEventLayout(t *testing.T) {
	typ := reflect.TypeFor[Event]()
	var fields uintptr
	for f := range typ.Fields() {
		fields += f.Type.Size()
	}
	if pad := typ.Size() - fields; pad >= 8 {
		t.Errorf("Event is %d bytes, %d of them padding: order its fields by size, 8-byte ones first", typ.Size(), pad)
	}
}
