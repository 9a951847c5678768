package ingest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
	"github.com/stormaudit/stormaudit/verify"
)

// TestPartitionsMatchOne writes the same input in one partition and in
// several, with run files whose marks a partition seeks to and
// duplicates on both sides of partition bounds, with and without
// buckets: the rows, the checkpoint, the duplicates file and the counts
// are the same, no device spans two files, and the dataset verifies.
func TestPartitionsMatchOne(t *testing.T) {
	lines := testkit.GenLines(30000, 211, 5)
	for i := range 2000 {
		lines = append(lines, lines[i*13])
	}
	in := testkit.WriteInput(t, "fleet.ndjson", lines)
	for _, buckets := range []int{0, 4} {
		one := ingestWith(t, in, Options{ChunkRecords: 4000, Buckets: buckets, Partitions: 1})
		many := ingestWith(t, in, Options{ChunkRecords: 4000, Buckets: buckets, Partitions: 5, partitionRows: 3000})
		m1, rows1 := readDataset(t, one)
		m5, rows5 := readDataset(t, many)
		if len(m5.Files) < 3 || len(m1.Files) >= len(m5.Files) {
			t.Fatalf("buckets %d: %d files in one partition, %d in up to five: the write was not split", buckets, len(m1.Files), len(m5.Files))
		}
		if m1.Checkpoint != m5.Checkpoint || m1.Totals != m5.Totals {
			t.Errorf("buckets %d: one partition: %q %+v\nfive: %q %+v", buckets, m1.Checkpoint, m1.Totals, m5.Checkpoint, m5.Totals)
		}
		for i := range m1.Inputs {
			if m1.Inputs[i].Counts != m5.Inputs[i].Counts {
				t.Errorf("buckets %d: input %d: %+v, in five partitions %+v", buckets, i, m1.Inputs[i].Counts, m5.Inputs[i].Counts)
			}
		}
		if len(rows1) != len(rows5) {
			t.Fatalf("buckets %d: %d rows, in five partitions %d", buckets, len(rows1), len(rows5))
		}
		for i := range rows1 {
			if rows1[i] != rows5[i] {
				t.Fatalf("buckets %d: row %d: %+v, in five partitions %+v", buckets, i, rows1[i], rows5[i])
			}
		}
		d1, _ := os.ReadFile(filepath.Join(one, dataset.DuplicatesName))
		d5, _ := os.ReadFile(filepath.Join(many, dataset.DuplicatesName))
		if !bytes.Equal(d1, d5) || bytes.Count(d1, []byte("\n")) != 2000 {
			t.Errorf("buckets %d: duplicates differ, or are not 2000 lines:\n%.300s\n%.300s", buckets, d1, d5)
		}
		assertDevicesInOneFile(t, many, m5)
		if left, _ := filepath.Glob(filepath.Join(many, "*.tmp")); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
		if rep, err := verify.Dataset(many, verify.Options{}); err != nil || rep.Problem != nil {
			t.Fatalf("buckets %d: verify: %v %+v", buckets, err, rep)
		}
	}
}

// ingestWith ingests in with opts, under a fixed log name so that two
// ingests of the same input have the same checkpoint.
func ingestWith(t *testing.T, in string, opts Options) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	opts.Log = "stormaudit/test"
	if _, err := Run(context.Background(), dir, []Source{{Name: in}}, opts); err != nil {
		t.Fatal(err)
	}
	return dir
}
