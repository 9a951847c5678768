package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/internal/testonly/testkit"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/parquet-go/parquet-go"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// writeDataset writes each element of parts as one Parquet file of a dataset
// in a new directory, with a manifest, and returns the directory. The parts
// are written with chain positions, except those whose index is in
// unchained.
func writeDataset(t testing.TB, parts [][]auditfmt.Record, unchained []int, opts ...FileOption) string {
	t.Helper()
	dir := t.TempDir()
	m := Manifest{Format: "stormaudit-dataset", SchemaVersion: 1, CreatedBy: "dataset test", SortedBy: SortedBy, Files: []File{}}
	for i, recs := range parts {
		name := fmt.Sprintf("part-%05d.parquet", i)
		w := writeTestFile(t, filepath.Join(dir, name), recs, !slices.Contains(unchained, i), opts...)
		m.Files = append(m.Files, File{Name: name, Rows: w.Rows(), RowGroups: w.RowGroups(), SHA256: w.SHA256()})
		m.Rows += w.Rows()
	}
	writeManifestFile(t, dir, &m)
	return dir
}

func writeManifestFile(t testing.TB, dir string, m *Manifest) {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// wantRow returns the values an Arrow reader must find for r, column by
// column, with nil for null, and for the chain columns those of chainOf(r)
// if chained. It is written from the schema's definition, independently of
// the conversion in schema.go.
func wantRow(r *auditfmt.Record, chained bool) []any {
	opt := func(has auditfmt.Presence, v any) any {
		if r.Has&has == 0 {
			return nil
		}
		return v
	}
	str := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	enum := func(v uint8, s string) any {
		if v == 0 {
			return nil
		}
		return s
	}
	var origin, seq, link any
	if chained {
		p := chainOf(r)
		origin, seq, link = p.Origin, p.Seq, string(p.Link[:])
	}
	return []any{
		r.ClientID,
		r.RecordedAt,
		int32(r.OffsetMin),
		r.Attempt,
		r.BackoffDelayS,
		r.Outcome.String(),
		r.CleanSession,
		opt(auditfmt.HasSchema, int32(r.Schema)),
		str(r.HostID),
		enum(uint8(r.Stage), r.Stage.String()),
		str(r.AttemptID),
		str(r.RecordID),
		opt(auditfmt.HasDeviceSeq, r.DeviceSeq),
		enum(uint8(r.FailureClass), r.FailureClass.String()),
		opt(auditfmt.HasReasonCode, int32(r.ReasonCode)),
		opt(auditfmt.HasCeiling, r.CeilingS),
		opt(auditfmt.HasSessionPresent, r.SessionPresent),
		opt(auditfmt.HasOutboxDepth, r.OutboxDepth),
		opt(auditfmt.HasOutboxFlushed, r.OutboxFlushed),
		opt(auditfmt.HasInboundRedelivered, r.InboundRedelivered),
		opt(auditfmt.HasInboundDuplicates, r.InboundDuplicates),
		opt(auditfmt.HasOutboxDropped, r.OutboxDropped),
		opt(auditfmt.HasInboundExpired, r.InboundExpired),
		str(r.Extra),
		str(r.Envelope),
		testkit.Sources[r.Source],
		r.Line,
		origin,
		seq,
		link,
	}
}

// arrowValue returns the value at row i of a, or nil for null.
func arrowValue(t *testing.T, a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.Timestamp:
		return int64(a.Value(i))
	case *array.FixedSizeBinary:
		return string(a.Value(i))
	}
	t.Fatalf("unexpected array type %s", a.DataType())
	return nil
}

// checkBatch compares every value of every row and column of rec with
// want, starting at want[0]; chained[i] says whether want[i] was written
// with its chain position.
func checkBatch(t *testing.T, rec arrow.RecordBatch, want []auditfmt.Record, chained []bool) {
	t.Helper()
	if !rec.Schema().Equal(arrowSchema) {
		t.Fatalf("batch schema:\n%s\nwant:\n%s", rec.Schema(), arrowSchema)
	}
	if int(rec.NumRows()) > len(want) {
		t.Fatalf("batch of %d rows, %d left to expect", rec.NumRows(), len(want))
	}
	bad := 0
	for i := range int(rec.NumRows()) {
		w := wantRow(&want[i], chained[i])
		for c := range int(rec.NumCols()) {
			if got := arrowValue(t, rec.Column(c), i); got != w[c] {
				t.Errorf("row %d (line %d), column %s: got %#v, want %#v", i, want[i].Line, rec.ColumnName(c), got, w[c])
				if bad++; bad == 10 {
					t.FailNow()
				}
			}
		}
	}
}

// TestArrowInterop writes a dataset with parquet-go and reads it back
// through arrow-go's pqarrow, comparing every value, nulls included.
func TestArrowInterop(t *testing.T) {
	all := testkit.Records(11, 7000)
	// An empty file, and a file without chain positions.
	parts := [][]auditfmt.Record{all[:2500], all[2500:2500], all[2500:4000], all[4000:]}
	dir := writeDataset(t, parts, []int{2}, RowGroupRows(1000))
	chained := make([]bool, len(all))
	for i := range chained {
		chained[i] = i < 2500 || i >= 4000
	}
	r, err := OpenArrow(dir, 600)
	if err != nil {
		t.Fatal(err)
	}
	mem := newLeakAllocator()
	r.mem = mem
	want := all
	batches := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.NumRows() == 0 || rec.NumRows() > 600 {
			t.Errorf("batch of %d rows, want 1 to 600", rec.NumRows())
		}
		checkBatch(t, rec, want, chained)
		want, chained = want[rec.NumRows():], chained[rec.NumRows():]
		rec.Release()
		batches++
	}
	if len(want) != 0 {
		t.Errorf("%d records not read", len(want))
	}
	if batches < 7000/600 {
		t.Errorf("%d batches", batches)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	mem.assertFreed(t)
}

// TestArrowAllNullColumns reads a dataset whose first row group has only
// nulls in some optional columns (dictionary ones among them), which the
// reader gives as nulls without reading them: whole, and part by part,
// every value as written, and no Arrow memory left behind.
func TestArrowAllNullColumns(t *testing.T) {
	recs := testkit.Records(14, 3000)
	for i := range recs[:1000] {
		r := &recs[i]
		r.HostID, r.Stage, r.AttemptID = "", 0, ""
		r.Has &^= auditfmt.HasOutboxDepth | auditfmt.HasOutboxFlushed
	}
	dir := writeDataset(t, [][]auditfmt.Record{recs}, nil, RowGroupRows(1000))
	parts, err := Parts(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 3 {
		t.Fatalf("%d parts, want 3", len(parts))
	}
	chained := make([]bool, len(recs))
	for i := range chained {
		chained[i] = true
	}
	for _, p := range append([]*Part{nil}, &parts[0], &parts[1]) {
		r, err := OpenArrowWith(dir, ArrowOptions{BatchRows: 300, Dictionaries: []string{"host_id", "stage"}, Part: p})
		if err != nil {
			t.Fatal(err)
		}
		mem := newLeakAllocator()
		r.mem = mem
		want := recs
		if p != nil {
			want = recs[p.FirstRow : p.FirstRow+p.Rows]
		}
		n := 0
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 { // the first part's, and only its, are not read
				skipped := r.cur.allNull[colStage] && r.cur.allNull[colHostID] && r.cur.allNull[colAttemptID] && r.cur.allNull[colOutboxDepth]
				if skipped != (p == &parts[0]) || r.cur.allNull[colDeviceSeq] {
					t.Errorf("part %+v: columns not read: %v", p, r.cur.allNull)
				}
			}
			if _, ok := rec.Column(rec.Schema().FieldIndices("stage")[0]).(*array.Dictionary); !ok {
				t.Fatalf("stage is read as %s, want a dictionary", rec.Column(rec.Schema().FieldIndices("stage")[0]).DataType())
			}
			plain := decoded(t, rec)
			checkBatch(t, plain, want[n:], chained[n:])
			n += int(rec.NumRows())
			plain.Release()
			rec.Release()
		}
		if n != len(want) {
			t.Errorf("part %+v: read %d rows, want %d", p, n, len(want))
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		mem.assertFreed(t)
	}
}

// TestArrowMemoryBounded reads a dataset many times larger than a batch
// and checks that the reader never holds more than a few batches' worth.
func TestArrowMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 400,000 rows")
	}
	recs := typicalRecords(400_000)
	dir := writeDataset(t, [][]auditfmt.Record{recs[:200_000], recs[200_000:]}, nil, RowGroupRows(50_000))
	r, err := OpenArrow(dir, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	mem := newLeakAllocator()
	r.mem = mem
	var peak, rows int
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rows += int(rec.NumRows())
		peak = max(peak, mem.CurrentAlloc())
		rec.Release()
	}
	// The decoded dataset is about 100 bytes a row (40 MB); a batch of
	// 1,000 rows about 100 KB; pages are cut at 1 MiB per column.
	t.Logf("%d rows, peak Arrow allocation %d bytes", rows, peak)
	if rows != len(recs) || peak > 8<<20 {
		t.Errorf("read %d rows with a peak of %d bytes allocated; want %d rows and at most 8 MiB", rows, peak, len(recs))
	}
}

func TestExportArrowIPC(t *testing.T) {
	all := testkit.Records(12, 3000)
	dir := writeDataset(t, [][]auditfmt.Record{all[:1000], all[1000:]}, []int{1})
	chained := make([]bool, len(all))
	for i := range 1000 {
		chained[i] = true
	}
	for _, compression := range []string{"none", "zstd", "lz4"} {
		var buf bytes.Buffer
		if err := ExportArrowIPC(dir, &buf, ExportOptions{Compression: compression}); err != nil {
			t.Fatal(err)
		}
		fr, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		defer fr.Close()
		if !fr.Schema().Equal(ExportSchema()) {
			t.Fatalf("export schema:\n%s\nwant:\n%s", fr.Schema(), ExportSchema())
		}
		// the low-cardinality columns are dictionary encoded, one
		// dictionary for the file
		for _, name := range ExportDictionaries {
			f, _ := fr.Schema().FieldsByName(name)
			if len(f) != 1 || !arrow.TypeEqual(f[0].Type, dictType) {
				t.Errorf("%s: column %s: %v, want %s", compression, name, f, dictType)
			}
		}
		want, chained := all, slices.Clone(chained)
		for i := range fr.NumRecords() {
			rec, err := fr.RecordBatch(i)
			if err != nil {
				t.Fatal(err)
			}
			checkBatch(t, decoded(t, rec), want, chained)
			want, chained = want[rec.NumRows():], chained[rec.NumRows():]
		}
		if len(want) != 0 {
			t.Errorf("%s: %d records missing from the export", compression, len(want))
		}
	}
	if err := ExportArrowIPC(dir, io.Discard, ExportOptions{Compression: "brotli"}); err == nil || !strings.Contains(err.Error(), "expected zstd, lz4 or none") {
		t.Errorf("unknown compression: %v", err)
	}
}

// decoded returns rec with its dictionary columns as plain strings, and
// the recorded_at of an export, in microseconds, in nanoseconds
// (recorded_at_ns added), in the dataset's Arrow schema.
func decoded(t *testing.T, rec arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	var cols []arrow.Array
	for c := 0; c < int(rec.NumCols()); c++ {
		a := rec.Column(c)
		if rec.ColumnName(c) == "recorded_at" && arrowTimeScale(a.DataType()) == 1000 {
			us, ns := a.(*array.Timestamp), rec.Column(c+1).(*array.Int32)
			b := array.NewTimestampBuilder(memory.DefaultAllocator, arrowColumns[colRecordedAt].Type.(*arrow.TimestampType))
			for i := range us.Len() {
				v := int64(us.Value(i)) * 1000
				if ns.IsValid(i) {
					v += int64(ns.Value(i))
				}
				b.Append(arrow.Timestamp(v))
			}
			cols = append(cols, b.NewArray())
			c++ // recorded_at_ns, taken
			continue
		}
		if d, ok := a.(*array.Dictionary); ok {
			b := array.NewStringBuilder(memory.DefaultAllocator)
			vals := d.Dictionary().(*array.String)
			for i := range d.Len() {
				if d.IsNull(i) {
					b.AppendNull()
				} else {
					b.Append(vals.Value(d.GetValueIndex(i)))
				}
			}
			a = b.NewArray()
		}
		cols = append(cols, a)
	}
	return array.NewRecordBatch(arrowSchema, cols, rec.NumRows())
}

// TestExportArrowIPCMicros: an export's recorded_at has the unit of the
// dataset's Parquet files, timestamp[us, tz=UTC], with the nanoseconds
// past the microsecond in recorded_at_ns after it, null for none, as the
// files have them, so that a table read from either has one type and
// nothing is rounded (issue 26: the export was in nanoseconds).
func TestExportArrowIPCMicros(t *testing.T) {
	recs := testkit.Records(5, 400)
	recs[0].RecordedAt -= recs[0].RecordedAt % 1000 // a whole microsecond: no recorded_at_ns
	recs[1].RecordedAt = recs[1].RecordedAt - recs[1].RecordedAt%1000 + 999
	dir := writeDataset(t, [][]auditfmt.Record{recs}, nil)
	var buf bytes.Buffer
	if err := ExportArrowIPC(dir, &buf, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	fr, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	sc := fr.Schema()
	at, ns := sc.FieldIndices("recorded_at"), sc.FieldIndices("recorded_at_ns")
	if len(at) != 1 || len(ns) != 1 || ns[0] != at[0]+1 {
		t.Fatalf("schema %s: want recorded_at, then recorded_at_ns", sc)
	}
	if got, want := sc.Field(at[0]).Type, (&arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}); !arrow.TypeEqual(got, want) || sc.Field(at[0]).Nullable {
		t.Errorf("recorded_at is %s (nullable %v), want %s, required, the unit of the Parquet files", got, sc.Field(at[0]).Nullable, want)
	}
	if f := sc.Field(ns[0]); f.Type.ID() != arrow.INT32 || !f.Nullable {
		t.Errorf("recorded_at_ns is %s (nullable %v), want a nullable int32", f.Type, f.Nullable)
	}
	// the unit of the files, as another reader finds it
	path := filepath.Join(dir, "part-00000.parquet")
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fsc, err := pqarrow.FromParquet(pf.MetaData().Schema, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if k := fsc.FieldIndices("recorded_at"); len(k) != 1 || !arrow.TypeEqual(fsc.Field(k[0]).Type, sc.Field(at[0]).Type) {
		t.Errorf("the export's recorded_at is %s, the files' %v", sc.Field(at[0]).Type, fsc)
	}
	i := 0
	for k := range fr.NumRecords() {
		rec, err := fr.RecordBatch(k)
		if err != nil {
			t.Fatal(err)
		}
		us, rem := rec.Column(at[0]).(*array.Timestamp), rec.Column(ns[0]).(*array.Int32)
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
}

func TestExportArrowIPCEmpty(t *testing.T) {
	dir := writeDataset(t, nil, nil)
	var buf bytes.Buffer
	if err := ExportArrowIPC(dir, &buf, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	fr, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	if fr.NumRecords() != 0 || !fr.Schema().Equal(ExportSchema()) {
		t.Errorf("%d batches, schema %s", fr.NumRecords(), fr.Schema())
	}
}

func TestArrowRejects(t *testing.T) {
	type metrics struct {
		Host string `parquet:"host"`
	}
	recs := testkit.Records(13, 10)
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, dir string, m *Manifest)
		want string
	}{
		{"foreign file", func(t *testing.T, dir string, m *Manifest) {
			os.Rename(writeForeign(t, []metrics{{"h"}}), filepath.Join(dir, m.Files[0].Name))
			m.Files[0].Rows = 1
		}, "part-00000.parquet: not a stormaudit dataset file: no column client_id (expected utf8)"},
		{"wrong type", func(t *testing.T, dir string, m *Manifest) {
			os.Rename(foreignFile(t, map[string]parquet.Node{"attempt": parquet.String()}), filepath.Join(dir, m.Files[0].Name))
			m.Files[0].Rows = 0
		}, "part-00000.parquet: not a stormaudit dataset file: column attempt: expected int64, found utf8"},
		{"row count", func(t *testing.T, dir string, m *Manifest) { m.Files[0].Rows++ },
			"part-00000.parquet: the file has 10 rows, the manifest says 11"},
		{"missing file", func(t *testing.T, dir string, m *Manifest) { m.Files[0].Name = "gone.parquet" },
			"gone.parquet: not a Parquet file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeDataset(t, [][]auditfmt.Record{recs}, nil)
			m, err := ReadManifest(dir)
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(t, dir, m)
			writeManifestFile(t, dir, m)
			r, err := OpenArrow(dir, 100)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, err = r.Next()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Next: %v\nwant an error containing %q", err, tc.want)
			}
			var ce *ColumnError
			if strings.Contains(tc.want, "not a stormaudit") && !errors.As(err, &ce) {
				t.Errorf("Next: %T, want *ColumnError", err)
			}
		})
	}
	if _, err := OpenArrow(t.TempDir(), 10); err == nil || !strings.Contains(err.Error(), "is not a dataset") {
		t.Errorf("OpenArrow(empty dir): %v", err)
	}
}

func BenchmarkArrowRead(b *testing.B) {
	recs := typicalRecords(1 << 20)
	dir := writeDataset(b, [][]auditfmt.Record{recs}, nil)
	cpu := testkit.CPUTime()
	for b.Loop() {
		r, err := OpenArrow(dir, DefaultBatchRows)
		if err != nil {
			b.Fatal(err)
		}
		total := 0
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			total += int(rec.NumRows())
			rec.Release()
		}
		r.Close()
		if total != len(recs) {
			b.Fatalf("read %d rows, want %d", total, len(recs))
		}
	}
	reportRows(b, len(recs), cpu)
}

// TestArrowParts reads a dataset of several files and row groups part by
// part and checks that the parts hold the rows of a whole read, in order.
func TestArrowParts(t *testing.T) {
	recs := typicalRecords(3000)
	dir := writeDataset(t, [][]auditfmt.Record{recs[:1700], recs[1700:]}, nil)
	whole := arrowColumn(t, dir, nil)
	parts, err := Parts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range parts {
		vals := arrowColumn(t, dir, &p)
		if int64(len(vals)) != p.Rows {
			t.Fatalf("part %+v: read %d rows", p, len(vals))
		}
		got = append(got, vals...)
	}
	if !slices.Equal(got, whole) {
		t.Fatalf("the parts' rows differ from a whole read (%d and %d rows)", len(got), len(whole))
	}
	bad := Part{File: 9}
	if _, err := OpenArrowWith(dir, ArrowOptions{Part: &bad}); err == nil {
		t.Error("a part of a file the dataset does not have was accepted")
	}
}

// arrowColumn returns client_id and line of every row read (of the part,
// if given), read as dictionaries.
func arrowColumn(t *testing.T, dir string, p *Part) []string {
	t.Helper()
	r, err := OpenArrowWith(dir, ArrowOptions{Columns: []string{"client_id", "line"}, Dictionaries: []string{"client_id"}, Part: p, BatchRows: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.Dictionary)
		vals := ids.Dictionary().(*array.String)
		lines := rec.Column(1).(*array.Int64)
		for i := range int(rec.NumRows()) {
			out = append(out, fmt.Sprintf("%s:%d", vals.Value(ids.GetValueIndex(i)), lines.Value(i)))
		}
		rec.Release()
	}
}

// Redact sees every value a device wrote, and values that redact to one
// pseudonym share one dictionary entry.
func TestExportArrowIPCRedact(t *testing.T) {
	all := testkit.Records(5, 400)
	dir := writeDataset(t, [][]auditfmt.Record{all}, nil)
	seen := map[string]int{}
	red := func(column, v string) string {
		seen[column]++
		if column == "client_id" {
			return "same" // every device one pseudonym: the dictionary must hold it once
		}
		return "r-" + v
	}
	var buf bytes.Buffer
	if err := ExportArrowIPC(dir, &buf, ExportOptions{Redact: red}); err != nil {
		t.Fatal(err)
	}
	fr, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	rec, err := fr.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	c := rec.Schema().FieldIndices("client_id")[0]
	d := rec.Column(c).(*array.Dictionary)
	if vals := d.Dictionary().(*array.String); vals.Len() != 1 || vals.Value(0) != "same" {
		t.Errorf("client_id dictionary %v, want [same]", vals)
	}
	for i := range d.Len() {
		if d.Dictionary().(*array.String).Value(d.GetValueIndex(i)) != "same" {
			t.Fatalf("row %d: client_id not redacted", i)
		}
	}
	a := rec.Column(rec.Schema().FieldIndices("attempt_id")[0]).(*array.String)
	for i := range a.Len() {
		if a.IsValid(i) && !strings.HasPrefix(a.Value(i), "r-") {
			t.Fatalf("row %d: attempt_id %q not redacted", i, a.Value(i))
		}
	}
	if seen["client_id"] == 0 || seen["attempt_id"] == 0 || seen["outcome"] != 0 {
		t.Errorf("redact saw %v: want client_id and attempt_id, not outcome", seen)
	}
}

// TestExportArrowIPCWindow: with Since and Until, the export holds
// exactly the rows recorded in [Since, Until), and counts the others.
func TestExportArrowIPCWindow(t *testing.T) {
	recs := testkit.Records(20, 50)
	dir := writeDataset(t, [][]auditfmt.Record{recs}, nil)
	lo, hi := recs[0].RecordedAt, recs[0].RecordedAt
	for _, r := range recs {
		lo, hi = min(lo, r.RecordedAt), max(hi, r.RecordedAt)
	}
	since, until := lo+(hi-lo)/3, lo+2*(hi-lo)/3
	want := 0
	for _, r := range recs {
		if r.RecordedAt >= since && r.RecordedAt < until {
			want++
		}
	}
	var buf bytes.Buffer
	var outside int64
	opts := ExportOptions{Since: time.Unix(0, since), Until: time.Unix(0, until), Outside: &outside}
	if err := ExportArrowIPC(dir, &buf, opts); err != nil {
		t.Fatal(err)
	}
	fr, err := ipc.NewFileReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	at := fr.Schema().FieldIndices("recorded_at")[0]
	got := 0
	for k := range fr.NumRecords() {
		rec, err := fr.RecordBatch(k)
		if err != nil {
			t.Fatal(err)
		}
		ts := rec.Column(at).(*array.Timestamp)
		for i := range ts.Len() {
			if us := int64(ts.Value(i)); us < since/1000 || us > until/1000 {
				t.Errorf("row %d of batch %d at %d µs, outside [%d, %d) ns", i, k, us, since, until)
			}
		}
		got += int(rec.NumRows())
	}
	if got != want || outside != int64(len(recs)-want) || want == 0 || want == len(recs) {
		t.Errorf("%d rows written, %d outside; want %d and %d of %d", got, outside, want, len(recs)-want, len(recs))
	}
}
