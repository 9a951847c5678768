package ingest

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
)

// TestScanMatchesRun: Scan yields, in order, exactly the rows Run writes,
// and accounts for the same lines, rejects and duplicates included, with
// chunks small enough that the sort spills.
func TestScanMatchesRun(t *testing.T) {
	lines := testkit.GenLines(5000, 40, 3)
	lines = append(lines, lines[7], lines[99], "{broken", `{"client_id": ""}`)
	in := testkit.WriteInput(t, "fleet.ndjson", lines)
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := Run(context.Background(), dir, []Source{{Name: in}}, Options{ChunkRecords: 700}); err != nil {
		t.Fatal(err)
	}
	want, rows := readDataset(t, dir)
	var got []auditfmt.Record
	man, err := Scan(context.Background(), filepath.Join(t.TempDir(), "scan"), []Source{{Name: in}}, Options{ChunkRecords: 700},
		func(recs []auditfmt.Record) error {
			got = append(got, recs...)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if man.Totals != want.Totals || man.Totals.Rejected != 2 || man.Totals.Duplicates != 2 || man.Rows != want.Rows {
		t.Fatalf("Scan accounts %+v (%d rows), Run %+v (%d rows)", man.Totals, man.Rows, want.Totals, want.Rows)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Fatalf("Scan yields %d records, Run writes %d rows, or in another order", len(got), len(rows))
	}
}

// TestScanStopsWhenCancelled: a cancelled scan (Ctrl-C during a raw
// check) yields no more records and says why, while it merges.
func TestScanStopsWhenCancelled(t *testing.T) {
	in := testkit.WriteInput(t, "fleet.ndjson", testkit.GenLines(20000, 40, 3))
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := Scan(ctx, filepath.Join(t.TempDir(), "scan"), []Source{{Name: in}}, Options{ChunkRecords: 700},
		func(recs []auditfmt.Record) error {
			calls++
			cancel()
			return nil
		})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("after a cancel in the first batch: %d calls, error %v; want 1 call and context.Canceled", calls, err)
	}
}
