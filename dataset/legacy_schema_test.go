package dataset

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
)

// TestSchemaAsLegacy writes the same records with FileWriter and with
// legacyWriter (parquet-go's row writer, which wrote the files before) and
// checks that every reader sees the same file: the footer's schema
// elements column by column (name, physical type, length, repetition,
// converted and logical type), the row groups' sizes and sorting columns,
// the key-value metadata, the Arrow schema pqarrow derives, and the
// records and chain positions read back.
func TestSchemaAsLegacy(t *testing.T) {
	recs := testkit.Records(5, 2500)
	dir := t.TempDir()
	newPath, oldPath := filepath.Join(dir, "new.parquet"), filepath.Join(dir, "old.parquet")
	writeTestFile(t, newPath, recs, true, RowGroupRows(1000))
	writeLegacyFile(t, oldPath, recs, 1000)

	got, want := footerOf(t, newPath), footerOf(t, oldPath)
	if len(got.Schema) != len(want.Schema) {
		t.Fatalf("%d schema elements, the old writer's file has %d", len(got.Schema), len(want.Schema))
	}
	for i := range want.Schema {
		if g, w := describeElement(&got.Schema[i]), describeElement(&want.Schema[i]); g != w {
			t.Errorf("schema element %d:\n got %s\nwant %s", i, g, w)
		}
	}
	if got.NumRows != want.NumRows || len(got.RowGroups) != len(want.RowGroups) {
		t.Fatalf("%d rows in %d row groups, the old writer's file %d in %d", got.NumRows, len(got.RowGroups), want.NumRows, len(want.RowGroups))
	}
	for i := range want.RowGroups {
		g, w := &got.RowGroups[i], &want.RowGroups[i]
		if g.NumRows != w.NumRows || !slices.Equal(g.SortingColumns, w.SortingColumns) {
			t.Errorf("row group %d: %d rows sorted by %v, want %d sorted by %v", i, g.NumRows, g.SortingColumns, w.NumRows, w.SortingColumns)
		}
		for c := range w.Columns {
			if gp, wp := g.Columns[c].MetaData.PathInSchema, w.Columns[c].MetaData.PathInSchema; !slices.Equal(gp, wp) || g.Columns[c].MetaData.Type != w.Columns[c].MetaData.Type {
				t.Errorf("row group %d, column chunk %d: %v %v, want %v %v", i, c, gp, g.Columns[c].MetaData.Type, wp, w.Columns[c].MetaData.Type)
			}
		}
	}
	if !slices.Equal(got.KeyValueMetadata, want.KeyValueMetadata) {
		t.Errorf("key-value metadata %v, want %v", got.KeyValueMetadata, want.KeyValueMetadata)
	}
	if g, w := arrowSchemaOf(t, newPath), arrowSchemaOf(t, oldPath); g != w {
		t.Errorf("pqarrow schema:\n got %s\nwant %s", g, w)
	}
	gotRecs, gotPos, gotSources := readTestFile(t, newPath)
	wantRecs, wantPos, wantSources := readTestFile(t, oldPath)
	compareRecords(t, gotRecs, wantRecs)
	if !slices.Equal(gotPos, wantPos) || !slices.Equal(gotSources, wantSources) {
		t.Error("chain positions or sources differ from the old writer's file")
	}
}

func writeLegacyFile(t *testing.T, path string, recs []auditfmt.Record, rowGroupRows int) {
	t.Helper()
	w, err := newLegacyWriter(path, testkit.Sources, rowGroupRows, false)
	if err != nil {
		t.Fatal(err)
	}
	pos := make([]hashchain.Pos, len(recs))
	for i := range recs {
		pos[i] = chainOf(&recs[i])
	}
	if err := w.WriteChained(recs, pos); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func footerOf(t *testing.T, path string) *format.FileMetaData {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := matchColumns(path, pf.Schema()); err != nil {
		t.Fatal(err)
	}
	return pf.Metadata()
}

// describeElement spells out what a reader takes from a schema element.
func describeElement(e *format.SchemaElement) string {
	return fmt.Sprintf("%s type=%v length=%v repetition=%v children=%v converted=%v logical=%s field_id=%d",
		e.Name, e.Type, e.TypeLength, e.RepetitionType, e.NumChildren, e.ConvertedType, e.LogicalType.String(), e.FieldID)
}

func arrowSchemaOf(t *testing.T, path string) string {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	sc, err := pqarrow.FromParquet(pf.MetaData().Schema, nil, pf.MetaData().KeyValueMetadata())
	if err != nil {
		t.Fatal(err)
	}
	return sc.String()
}
