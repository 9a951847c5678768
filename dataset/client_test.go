package dataset

import (
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// TestReadClient reads single clients out of a dataset of two files (one
// without chain columns) whose row groups and files split devices, and
// compares each with the rows a full scan finds.
func TestReadClient(t *testing.T) {
	recs := testkit.Records(7, 120_000) // 37 rows a device
	cut := 70_000 + 11                  // a device split between the files
	dir := writeDataset(t, [][]auditfmt.Record{recs[:cut], recs[cut:]}, []int{1}, RowGroupRows(25_000))
	ids := []string{
		recs[0].ClientID, recs[len(recs)-1].ClientID, // the first and the last
		recs[25_000].ClientID, // split between row groups
		recs[cut].ClientID,    // split between files
		recs[50_000].ClientID, recs[99_999].ClientID,
		"dev-00001-", "a", "zzz", // absent: between two, before all, after all
	}
	for _, id := range ids {
		rows, names, err := ReadClient(dir, id)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		var want []int
		for i := range recs {
			if recs[i].ClientID == id {
				want = append(want, i)
			}
		}
		if len(rows) != len(want) {
			t.Fatalf("%s: %d rows, want %d", id, len(rows), len(want))
		}
		for k, i := range want {
			got, w := rows[k], recs[i]
			file, row := 0, int64(i)
			if i >= cut {
				file, row = 1, int64(i-cut)
			}
			if got.File != file || got.Row != row {
				t.Fatalf("%s: row %d at file %d row %d, want file %d row %d", id, k, got.File, got.Row, file, row)
			}
			if names[got.Record.Source] != testkit.Sources[w.Source] {
				t.Fatalf("%s: row %d: source %q, want %q", id, k, names[got.Record.Source], testkit.Sources[w.Source])
			}
			got.Record.Source = w.Source
			if got.Record != w {
				t.Fatalf("%s: row %d:\n got %+v\nwant %+v", id, k, got.Record, w)
			}
			wantChain := hashchain.Pos{}
			if file == 0 {
				wantChain = chainOf(&w)
			}
			if got.Chain != wantChain {
				t.Fatalf("%s: row %d: chain %+v, want %+v", id, k, got.Chain, wantChain)
			}
		}
	}
}

// TestReadClientBadDataset checks that a missing file is an error naming it.
func TestReadClientBadDataset(t *testing.T) {
	dir := writeDataset(t, [][]auditfmt.Record{testkit.Records(1, 100)}, nil)
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Files = append(m.Files, File{Name: "part-99999.parquet", Rows: 1})
	writeManifestFile(t, dir, m)
	if _, _, err := ReadClient(dir, "dev-00000"); err == nil || !strings.Contains(err.Error(), "part-99999.parquet") {
		t.Fatalf("err = %v, want one naming part-99999.parquet", err)
	}
}

// BenchmarkReadClient reads one client of 37 rows out of a dataset of
// 1,000,000 rows in row groups of 131,072: the page index keeps it to the
// pages that hold it.
func BenchmarkReadClient(b *testing.B) {
	recs := testkit.Records(3, 1_000_000)
	dir := writeDataset(b, [][]auditfmt.Record{recs}, nil)
	id := recs[600_000].ClientID
	for b.Loop() {
		rows, _, err := ReadClient(dir, id)
		if err != nil || len(rows) != 37 {
			b.Fatal(len(rows), err)
		}
	}
}
