package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
	"github.com/stormaudit/stormaudit/verify"
)

// sortedLines returns lines in dataset order (auditfmt.Compare, ties in
// input order), each line of dup repeated right after itself.
func sortedLines(t *testing.T, lines []string, dup func(i int) bool) []string {
	t.Helper()
	type decoded struct {
		rec  auditfmt.Record
		line string
	}
	var d auditfmt.Decoder
	recs := make([]decoded, len(lines))
	for i, l := range lines {
		recs[i].line = l
		if err := d.Decode([]byte(l), &recs[i].rec); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	slices.SortStableFunc(recs, func(a, b decoded) int { return auditfmt.Compare(&a.rec, &b.rec) })
	var out []string
	for i, r := range recs {
		out = append(out, r.line)
		if dup(i) {
			out = append(out, r.line)
		}
	}
	return out
}

// TestStreamMatchesSort ingests input that arrives in order (streamed),
// input in order up to a late record (streamed, then read back and
// merged), input in order across two sources, and NDJSON followed by
// CSV (which is sorted, ending the stream), with duplicates, one at a
// batch boundary, and rejected lines: each dataset is the one the sort
// makes of the same input, in one partition and in several.
func TestStreamMatchesSort(t *testing.T) {
	base := testkit.GenLines(24000, 97, 3)
	sorted := sortedLines(t, base, func(i int) bool { return i%37 == 0 || i == batchLines-1 })
	sorted = slices.Insert(sorted, 5000, `{"client_id": "dev-0001", "attempt": -1}`) // rejected
	late := append(slices.Clone(sorted), base[:3000]...)                             // duplicates of records streamed long before
	late = append(late, testkit.GenLines(3000, 50, 4)...)                            // new records of early devices
	half := len(sorted) / 2
	cases := []struct {
		name    string
		inputs  [][]string
		streams bool // the stream lasts to the end
	}{
		{"sorted", [][]string{sorted}, true},
		{"late", [][]string{late}, false},
		{"two sources in order", [][]string{sorted[:half], sorted[half:]}, true},
		{"second source out of order", [][]string{sorted[half:], sorted[:half]}, false},
		{"then CSV, in order", [][]string{sorted, {
			"client_id,attempt,backoff_delay_s,outcome,clean_session,recorded_at",
			"dev-9999,1,0.5,backoff_wait,false,2026-11-30T14:00:00Z",
			"dev-9999,1,0.5,backoff_wait,false,2026-11-30T14:00:00Z",
			"dev-9999,2,1.5,connected,false,2026-11-30T14:00:02Z",
		}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var sources []Source
			for i, lines := range c.inputs {
				ext := ".ndjson"
				if strings.HasPrefix(lines[0], "client_id,") {
					ext = ".csv"
				}
				sources = append(sources, Source{Name: testkit.WriteInput(t, "in"+string(rune('a'+i))+ext, lines)})
			}
			want := ingestSources(t, sources, Options{noStream: true, ChunkRecords: 5000})
			for _, opts := range []Options{{ChunkRecords: 5000}, {ChunkRecords: 5000, Partitions: 4, partitionRows: 4000}} {
				var ended []int64
				opts.streamEnded = func(kept int64) { ended = append(ended, kept) }
				got := ingestSources(t, sources, opts)
				if streamed := len(ended) == 0; streamed != c.streams {
					t.Errorf("partitions %d: the stream ended after %v records; want it to last to the end: %v", opts.Partitions, ended, c.streams)
				}
				if !c.streams && ended[0] < 9000 {
					t.Errorf("the stream ended after %d records, before the record out of order", ended[0])
				}
				sameDataset(t, want, got)
			}
		})
	}
}

// ingestSources ingests sources under a fixed log name.
func ingestSources(t *testing.T, sources []Source, opts Options) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	opts.Log = "stormaudit/test"
	if _, err := Run(t.Context(), dir, sources, opts); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sameDataset fails t unless the datasets in dirs want and got have the
// same rows, checkpoint, counts and duplicates, and got verifies and
// leaves no temporary files.
func sameDataset(t *testing.T, want, got string) {
	t.Helper()
	mw, rw := readDataset(t, want)
	mg, rg := readDataset(t, got)
	if mw.Checkpoint != mg.Checkpoint || mw.Totals != mg.Totals {
		t.Errorf("checkpoint and totals %q %+v, want %q %+v", mg.Checkpoint, mg.Totals, mw.Checkpoint, mw.Totals)
	}
	for i := range mw.Inputs {
		if mw.Inputs[i].Counts != mg.Inputs[i].Counts {
			t.Errorf("input %d: %+v, want %+v", i, mg.Inputs[i].Counts, mw.Inputs[i].Counts)
		}
	}
	if len(rw) != len(rg) {
		t.Fatalf("%d rows, want %d", len(rg), len(rw))
	}
	for i := range rw {
		if rw[i] != rg[i] {
			t.Fatalf("row %d: %+v, want %+v", i, rg[i], rw[i])
		}
	}
	for _, name := range []string{dataset.DuplicatesName, dataset.RejectsName} {
		dw, _ := os.ReadFile(filepath.Join(want, name))
		dg, _ := os.ReadFile(filepath.Join(got, name))
		if !bytes.Equal(dw, dg) {
			t.Errorf("%s differs:\n%.300s\nwant\n%.300s", name, dg, dw)
		}
	}
	if mw.Totals.Duplicates == 0 || mw.Totals.Rejected == 0 {
		t.Errorf("totals %+v: the input should have duplicates and rejects", mw.Totals)
	}
	if left, _ := filepath.Glob(filepath.Join(got, "*.tmp")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if rep, err := verify.Dataset(got, verify.Options{}); err != nil || rep.Problem != nil {
		t.Fatalf("verify: %v %+v", err, rep)
	}
}
