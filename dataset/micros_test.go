package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
)

// TestRecordedAtMicros: a dataset file stores recorded_at as
// TIMESTAMP(MICROS, UTC), which Spark 3 reads (it refuses NANOS), and the
// nanoseconds past the microsecond, when a record has them, in
// recorded_at_ns. Read here with Apache Arrow's own Parquet reader, as
// any tool other than stormaudit would; stormaudit's readers give back
// the exact nanosecond.
func TestRecordedAtMicros(t *testing.T) {
	recs := testkit.Records(5, 400)
	recs[0].RecordedAt -= recs[0].RecordedAt % 1000 // a whole microsecond: no recorded_at_ns
	recs[1].RecordedAt = recs[1].RecordedAt - recs[1].RecordedAt%1000 + 999
	path := filepath.Join(t.TempDir(), "part-00000.parquet")
	w, err := CreateFile(path, testkit.Sources)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(recs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	sc := tbl.Schema()
	at, ns := sc.FieldIndices("recorded_at"), sc.FieldIndices("recorded_at_ns")
	if len(at) != 1 || len(ns) != 1 {
		t.Fatalf("schema %s: want recorded_at and recorded_at_ns", sc)
	}
	if got := sc.Field(at[0]).Type; !arrow.TypeEqual(got, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}) {
		t.Errorf("recorded_at read by Arrow as %s, want timestamp[us, tz=UTC]", got)
	}
	if got := sc.Field(ns[0]).Type; got.ID() != arrow.INT32 || !sc.Field(ns[0]).Nullable {
		t.Errorf("recorded_at_ns read by Arrow as %s, want a nullable int32", got)
	}
	i := 0
	atCol, nsCol := tbl.Column(at[0]).Data(), tbl.Column(ns[0]).Data()
	for k, chunk := range atCol.Chunks() {
		us, rem := chunk.(*array.Timestamp), nsCol.Chunk(k).(*array.Int32)
		for j := range us.Len() {
			want := recs[i].RecordedAt
			got := int64(us.Value(j)) * 1000
			if rem.IsValid(j) {
				got += int64(rem.Value(j))
			}
			if got != want || rem.IsValid(j) != (want%1000 != 0) {
				t.Fatalf("row %d: recorded_at %d µs + recorded_at_ns %v, want %d ns", i, us.Value(j), rem.IsValid(j), want)
			}
			i++
		}
	}
	if i != len(recs) {
		t.Fatalf("%d rows, want %d", i, len(recs))
	}

	r, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make([]auditfmt.Record, len(recs))
	if n, err := r.Read(got); n != len(recs) || err != nil {
		t.Fatalf("Read: %d, %v", n, err)
	}
	for i := range recs {
		if got[i].RecordedAt != recs[i].RecordedAt {
			t.Fatalf("row %d: read back %d, want %d", i, got[i].RecordedAt, recs[i].RecordedAt)
		}
	}
}

func TestSplitTime(t *testing.T) {
	for _, c := range []struct {
		ns  int64
		us  int64
		rem int32
	}{{0, 0, 0}, {999, 0, 999}, {1000, 1, 0}, {1_764_512_250_123_456_789, 1_764_512_250_123_456, 789}, {-1, -1, 999}, {-1000, -1, 0}, {-1001, -2, 999}} {
		if us, rem := splitTime(c.ns); us != c.us || rem != c.rem || us*1000+int64(rem) != c.ns {
			t.Errorf("splitTime(%d) = %d, %d; want %d, %d", c.ns, us, rem, c.us, c.rem)
		}
	}
}

// TestRecordedAtBeyondNanoseconds: a file (of another writer) whose
// recorded_at, in microseconds, lies beyond what nanoseconds hold (after
// 2262) gives a row error, not a time wrapped into the past.
func TestRecordedAtBeyondNanoseconds(t *testing.T) {
	path := writeRawRows(t, row{ClientID: "dev-1", RecordedAt: 253402300799000000, Outcome: "connected", Source: "far.ndjson", Line: 1})
	r, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs := make([]auditfmt.Record, 1)
	_, err = r.Read(recs)
	var re *RowError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "recorded_at: expected a time from 1678 to 2261") {
		t.Errorf("Read: %v, want a row error for recorded_at", err)
	}
}

// TestEmptyTextAndNullChainRejected: an optional text column holds null
// for an absent field, so a non-null empty string (which would read as
// absent too, and give the row the same canonical bytes) is a row error;
// so is a null chain column in a chained file (a null seq would read as
// 0).
func TestEmptyTextAndNullChainRejected(t *testing.T) {
	empty, origin, link := "", "log/dev-1", [32]byte{1}
	seq := int64(0)
	good := row{ClientID: "dev-1", RecordedAt: 1764512250000000, Outcome: "connected", Source: "x.ndjson", Line: 1, Origin: &origin, Seq: &seq, Link: &link}
	for _, tc := range []struct {
		name, want string
		edit       func(r *row)
	}{
		{"host_id", "host_id: expected null for an absent field, or a non-empty value, found an empty string", func(r *row) { r.HostID = &empty }},
		{"stage", "stage: expected null for an absent field", func(r *row) { r.Stage = &empty }},
		{"extra", "extra: expected null for an absent field", func(r *row) { r.Extra = &empty }},
		{"seq", "seq: expected a value, as every row of a chained file has", func(r *row) { r.Seq = nil }},
	} {
		bad := good
		bad.Line = 2
		tc.edit(&bad)
		r, err := OpenFile(writeRawRows(t, good, bad))
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.ReadChain(make([]auditfmt.Record, 2), make([]hashchain.Pos, 2))
		r.Close()
		var re *RowError
		if !errors.As(err, &re) || re.Row != 1 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a row error at row 1: %s", tc.name, err, tc.want)
		}
	}
}

// writeRawRows writes rows as they are, no writer of ours checking them,
// to a Parquet file of the dataset's schema, and returns its path.
func writeRawRows(t *testing.T, rows ...row) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := parquet.NewGenericWriter[row](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
