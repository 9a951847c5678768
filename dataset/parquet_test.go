package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/hashchain"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"

	"github.com/parquet-go/parquet-go"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// typicalRecords returns n records shaped like a real fleet's log: the
// required fields, schema and host_id on every record, a failure class
// and reason code on failures, an attempt_id on most.
func typicalRecords(n int) []auditfmt.Record {
	rng := rand.New(rand.NewPCG(7, 7))
	recs := make([]auditfmt.Record, n)
	base := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC).UnixNano()
	outcomes := []auditfmt.Outcome{auditfmt.BackoffWait, auditfmt.AttemptFailed, auditfmt.BackoffWait, auditfmt.AttemptFailed, auditfmt.BackoffWait, auditfmt.Connected}
	for i := range recs {
		r := &recs[i]
		dev, k := i/60, i%60
		r.ClientID = fmt.Sprintf("sensor-%06d", dev)
		r.RecordedAt = base + int64(dev)*int64(time.Millisecond) + int64(k)*int64(2*time.Second) + rng.Int64N(int64(time.Second))
		r.Attempt = int64(k % 6 / 2)
		r.BackoffDelayS = rng.Float64() * float64(int(1)<<r.Attempt)
		r.Outcome = outcomes[k%6]
		r.CleanSession = true
		r.Has = auditfmt.HasSchema
		r.Schema = 1
		r.HostID = fmt.Sprintf("gw-%03d", dev%200)
		if rng.IntN(4) != 0 {
			r.AttemptID = fmt.Sprintf("%06d-%04d", dev, k)
		}
		if r.Outcome == auditfmt.AttemptFailed {
			r.FailureClass = auditfmt.FailTransient
			r.Has |= auditfmt.HasReasonCode
			r.ReasonCode = 0x88
		}
		r.Line = int64(i + 1)
	}
	return recs
}

// chainOf returns the chain position the tests store with r: made up,
// but derived from r alone, so that expectations need only the record.
func chainOf(r *auditfmt.Record) hashchain.Pos {
	return hashchain.Pos{Origin: "test-log/" + r.ClientID, Seq: r.Line - 1, Link: sha256.Sum256([]byte(fmt.Sprint(r.ClientID, r.Line)))}
}

// writeTestFile writes recs to path, with their chainOf positions if
// chained.
func writeTestFile(t testing.TB, path string, recs []auditfmt.Record, chained bool, opts ...FileOption) *FileWriter {
	t.Helper()
	w, err := CreateFile(path, testkit.Sources, opts...)
	if err != nil {
		t.Fatal(err)
	}
	// Uneven batches exercise the chunking.
	pos := make([]hashchain.Pos, 777)
	for len(recs) > 0 {
		k := min(len(recs), 777)
		if chained {
			for i := range recs[:k] {
				pos[i] = chainOf(&recs[i])
			}
			err = w.WriteChained(recs[:k], pos[:k])
		} else {
			err = w.Write(recs[:k])
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = recs[k:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w
}

func readTestFile(t testing.TB, path string) ([]auditfmt.Record, []hashchain.Pos, []string) {
	t.Helper()
	r, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var got []auditfmt.Record
	var gotPos []hashchain.Pos
	buf, pos := make([]auditfmt.Record, 500), make([]hashchain.Pos, 500)
	for {
		n, err := r.ReadChain(buf, pos)
		got, gotPos = append(got, buf[:n]...), append(gotPos, pos[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if int64(len(got)) != r.NumRows() {
		t.Errorf("read %d rows, NumRows says %d", len(got), r.NumRows())
	}
	return got, gotPos, r.Sources()
}

func TestFileRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n         int
		rowGroups int
		opts      []FileOption
	}{
		{"empty", 0, 0, nil},
		{"one", 1, 1, nil},
		{"default row groups", 5000, 1, nil},
		{"many row groups", 5000, 5, []FileOption{RowGroupRows(1000)}},
		{"uneven row groups", 1001, 3, []FileOption{RowGroupRows(500)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := testkit.Records(1, tc.n)
			for i := range want {
				if err := want[i].Validate(); err != nil {
					t.Fatalf("generated record %d: %v", i, err)
				}
			}
			path := filepath.Join(t.TempDir(), "part-00000.parquet")
			w := writeTestFile(t, path, want, true, tc.opts...)
			if w.Rows() != int64(tc.n) || w.RowGroups() != tc.rowGroups {
				t.Errorf("Rows, RowGroups = %d, %d; want %d, %d", w.Rows(), w.RowGroups(), tc.n, tc.rowGroups)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if sum := sha256.Sum256(b); w.SHA256() != hex.EncodeToString(sum[:]) {
				t.Errorf("SHA256() = %s, file hashes to %x", w.SHA256(), sum)
			}
			got, pos, sources := readTestFile(t, path)
			if !slices.Equal(sources, testkit.Sources) {
				t.Errorf("Sources() = %q, want %q", sources, testkit.Sources)
			}
			compareRecords(t, got, want)
			for i := range pos {
				if pos[i] != chainOf(&want[i]) {
					t.Fatalf("row %d: chain position %+v, want %+v", i, pos[i], chainOf(&want[i]))
				}
			}
		})
	}
}

// TestFileLargeStrings writes records of nearly the largest size, more
// than maxBatchBytes of them in one Write, which the writer splits into
// several batches (and pages): they read back as written.
func TestFileLargeStrings(t *testing.T) {
	want := testkit.Records(3, 40)
	rng := rand.New(rand.NewPCG(3, 3))
	pad := make([]byte, auditfmt.MaxLineBytes*3/4) // random letters: zstd must not shrink them past the readers' bound
	for i := range want {
		for j := range pad {
			pad[j] = byte('a' + rng.IntN(26))
		}
		want[i].Extra = `{"pad":"` + string(pad) + `"}`
	}
	path := filepath.Join(t.TempDir(), "part-00000.parquet")
	w, err := CreateFile(path, testkit.Sources)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(want); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, _ := readTestFile(t, path)
	compareRecords(t, got, want)
}

func compareRecords(t *testing.T, got, want []auditfmt.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d:\ngot  %+v\nwant %+v", i, got[i], want[i])
			if bad++; bad == 5 {
				t.FailNow()
			}
		}
	}
}

// TestFileMetadata checks what the file declares to other readers.
func TestFileMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.parquet")
	writeTestFile(t, path, testkit.Records(2, 3000), true, RowGroupRows(1000))
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
	if v, _ := pf.Lookup(MetaSchemaVersion); v != "1" {
		t.Errorf("%s = %q, want 1", MetaSchemaVersion, v)
	}
	if v, _ := pf.Lookup(MetaSources); v != `["fleet-a.ndjson","-","fleet b/日志.csv"]` {
		t.Errorf("%s = %s", MetaSources, v)
	}
	for i, rg := range pf.Metadata().RowGroups {
		var cols []string
		for _, sc := range rg.SortingColumns {
			cols = append(cols, columnNames[sc.ColumnIdx])
			if sc.Descending {
				t.Errorf("row group %d: sorting column %d descending", i, sc.ColumnIdx)
			}
		}
		if !slices.Equal(cols, SortedBy) {
			t.Errorf("row group %d: sorting columns %q, want %q", i, cols, SortedBy)
		}
		for c, cc := range rg.Columns {
			// zstd, except link and the columns whose first page zstd
			// did not shrink; one codec a column in every row group
			codec, first := cc.MetaData.Codec.String(), pf.Metadata().RowGroups[0].Columns[c].MetaData.Codec.String()
			switch {
			case codec != first:
				t.Errorf("row group %d: column %s: codec %s, %s in row group 0", i, cc.MetaData.PathInSchema, codec, first)
			case columnNames[c] == "link" && codec != "UNCOMPRESSED":
				t.Errorf("row group %d: column link: codec %s, want UNCOMPRESSED", i, codec)
			case codec != "ZSTD" && codec != "UNCOMPRESSED":
				t.Errorf("row group %d: column %s: codec %s", i, cc.MetaData.PathInSchema, codec)
			case columnNames[c] == "client_id" && codec != "ZSTD":
				t.Errorf("row group %d: column client_id: codec %s, want ZSTD", i, codec)
			}
		}
	}
	if got := strings.Join(Columns(), ","); got != "client_id,recorded_at,recorded_at_ns,recorded_offset_min,attempt,backoff_delay_s,outcome,clean_session,schema,host_id,stage,attempt_id,record_id,device_seq,failure_class,reason_code,ceiling_s,session_present,outbox_depth,outbox_flushed,inbound_redelivered,inbound_duplicates,outbox_dropped,inbound_expired,extra,envelope,source,line,origin,seq,link" {
		t.Errorf("Columns() = %s", got)
	}
}

func TestFileWriterErrors(t *testing.T) {
	recs := testkit.Records(3, 10)
	for _, tc := range []struct {
		name string
		edit func([]auditfmt.Record)
		want string
	}{
		{"outcome", func(r []auditfmt.Record) { r[5].Outcome = 0 }, "row 5: outcome: expected one of connected, backoff_wait"},
		{"stage", func(r []auditfmt.Record) { r[4].Stage = 9 }, "row 4: stage: expected one of link, address, session, service"},
		{"source out of range", func(r []auditfmt.Record) { r[2].Source = 3 }, "row 2: source: expected an index below 3"},
		{"reason code too wide", func(r []auditfmt.Record) { r[1].Has |= auditfmt.HasReasonCode; r[1].ReasonCode = 1 << 40 }, "row 1: reason_code: expected a 32-bit integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.parquet")
			w, err := CreateFile(path, testkit.Sources)
			if err != nil {
				t.Fatal(err)
			}
			bad := slices.Clone(recs)
			tc.edit(bad)
			err = w.Write(bad)
			var re *RowError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), path) {
				t.Fatalf("Write: %v; want a *RowError containing %q", err, tc.want)
			}
			if err := w.Write(recs); err == nil {
				t.Error("Write after an error succeeded")
			}
			if err := w.Close(); err == nil {
				t.Error("Close after an error succeeded")
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("the failed file is still there: %v", err)
			}
		})
	}
	if _, err := CreateFile(filepath.Join(t.TempDir(), "f.parquet"), nil, RowGroupRows(0)); err == nil || !strings.Contains(err.Error(), "row group rows") {
		t.Errorf("CreateFile with RowGroupRows(0): %v", err)
	}
}

// writeForeign writes rows of any struct type to a Parquet file, as another
// program would.
func writeForeign[T any](t *testing.T, rows []T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "foreign.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// foreignFile writes an empty Parquet file whose schema is ours with the
// columns in replace swapped (or, for nil, dropped).
func foreignFile(t *testing.T, replace map[string]parquet.Node) string {
	t.Helper()
	group := parquet.Group{}
	for _, f := range fileSchema.Fields() {
		group[f.Name()] = f
	}
	for name, node := range replace {
		if node == nil {
			delete(group, name)
		} else {
			group[name] = node
		}
	}
	path := filepath.Join(t.TempDir(), "foreign.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewWriter(f, parquet.NewSchema("foreign", group))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOpenFileRejectsForeignFiles(t *testing.T) {
	type metrics struct {
		Host  string  `parquet:"host"`
		Value float64 `parquet:"value"`
	}
	for _, tc := range []struct {
		name string
		path string
		want string
	}{
		{"other schema", writeForeign(t, []metrics{{"a", 1}}),
			"not a stormaudit dataset file: no column client_id (expected BYTE_ARRAY (STRING))"},
		{"missing column", foreignFile(t, map[string]parquet.Node{"line": nil}),
			"not a stormaudit dataset file: no column line (expected INT64)"},
		{"wrong type", foreignFile(t, map[string]parquet.Node{"attempt": parquet.String()}),
			"not a stormaudit dataset file: column attempt: expected INT64, found BYTE_ARRAY (STRING)"},
		{"unsigned", foreignFile(t, map[string]parquet.Node{"attempt": parquet.Uint(64)}),
			"not a stormaudit dataset file: column attempt: expected INT64, found INT64 (INT(64,false))"},
		{"local timestamp", foreignFile(t, map[string]parquet.Node{"recorded_at": parquet.TimestampAdjusted(parquet.Microsecond, false)}),
			"not a stormaudit dataset file: column recorded_at: expected INT64 (TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)), found INT64 (TIMESTAMP(isAdjustedToUTC=false,unit=MICROS))"},
		{"milli timestamp", foreignFile(t, map[string]parquet.Node{"recorded_at": parquet.Timestamp(parquet.Millisecond)}),
			"not a stormaudit dataset file: column recorded_at: expected INT64 (TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)), found INT64 (TIMESTAMP(isAdjustedToUTC=true,unit=MILLIS))"},
		{"repeated", foreignFile(t, map[string]parquet.Node{"outcome": parquet.Repeated(parquet.String())}),
			"not a stormaudit dataset file: column outcome: expected BYTE_ARRAY (STRING), found a repeated column"},
		{"chain column missing", foreignFile(t, map[string]parquet.Node{"seq": nil}),
			"not a stormaudit dataset file: no column seq (expected INT64)"},
		{"short link", foreignFile(t, map[string]parquet.Node{"link": parquet.Optional(parquet.Leaf(parquet.FixedLenByteArrayType(16)))}),
			"not a stormaudit dataset file: column link: expected FIXED_LEN_BYTE_ARRAY(32), found FIXED_LEN_BYTE_ARRAY(16)"},
		{"group", foreignFile(t, map[string]parquet.Node{"extra": parquet.Group{"a": parquet.String()}}),
			"not a stormaudit dataset file: column extra: expected BYTE_ARRAY (STRING), found a group"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := OpenFile(tc.path)
			var ce *ColumnError
			if !errors.As(err, &ce) || err.Error() != tc.path+": "+tc.want {
				t.Fatalf("OpenFile: %v\nwant *ColumnError: %s: %s", err, tc.path, tc.want)
			}
		})
	}
	notParquet := filepath.Join(t.TempDir(), "x.parquet")
	os.WriteFile(notParquet, []byte(`{"client_id":"a"}`+"\n"), 0o644)
	if _, err := OpenFile(notParquet); err == nil || !strings.HasPrefix(err.Error(), notParquet+": not a Parquet file") {
		t.Errorf("OpenFile(NDJSON): %v", err)
	}
}

func TestChainColumns(t *testing.T) {
	recs := testkit.Records(4, 100)
	path := filepath.Join(t.TempDir(), "f.parquet")
	writeTestFile(t, path, recs, false)
	got, pos, _ := readTestFile(t, path)
	compareRecords(t, got, recs)
	for i := range pos {
		if pos[i] != (hashchain.Pos{}) {
			t.Fatalf("row %d written without a chain position reads as %+v", i, pos[i])
		}
	}

	w, err := CreateFile(filepath.Join(t.TempDir(), "g.parquet"), testkit.Sources)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChained(recs, make([]hashchain.Pos, 3)); err == nil || !strings.Contains(err.Error(), "100 records but 3 chain positions") {
		t.Errorf("WriteChained with too few positions: %v", err)
	}
	w.Close()

	// A file of another program has no chain columns: Read reads it,
	// ReadChain says what is missing.
	type plain struct {
		ClientID          string   `parquet:"client_id"`
		RecordedAt        int64    `parquet:"recorded_at,timestamp(nanosecond)"`
		RecordedOffsetMin int32    `parquet:"recorded_offset_min"`
		Attempt           int64    `parquet:"attempt"`
		BackoffDelayS     float64  `parquet:"backoff_delay_s"`
		Outcome           string   `parquet:"outcome"`
		CleanSession      bool     `parquet:"clean_session"`
		Schema            *int32   `parquet:"schema,optional"`
		HostID            *string  `parquet:"host_id,optional"`
		Stage             *string  `parquet:"stage,optional"`
		AttemptID         *string  `parquet:"attempt_id,optional"`
		RecordID          *string  `parquet:"record_id,optional"`
		DeviceSeq         *int64   `parquet:"device_seq,optional"`
		FailureClass      *string  `parquet:"failure_class,optional"`
		ReasonCode        *int32   `parquet:"reason_code,optional"`
		CeilingS          *float64 `parquet:"ceiling_s,optional"`
		SessionPresent    *bool    `parquet:"session_present,optional"`
		Extra             *string  `parquet:"extra,optional"`
		Envelope          *string  `parquet:"envelope,optional"`
		Source            string   `parquet:"source"`
		Line              int64    `parquet:"line"`
	}
	foreign := writeForeign(t, []plain{{ClientID: "d", Outcome: "connected", Source: "x", Line: 1}})
	r, err := OpenFile(foreign)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.ReadChain(make([]auditfmt.Record, 1), make([]hashchain.Pos, 1))
	var ce *ColumnError
	if !errors.As(err, &ce) || err.Error() != foreign+": not a stormaudit dataset file: no column origin (expected BYTE_ARRAY (STRING))" {
		t.Errorf("ReadChain: %v", err)
	}
	if n, err := r.Read(make([]auditfmt.Record, 2)); n != 1 || err != nil {
		t.Errorf("Read: %d, %v", n, err)
	}

	r2, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if n, err := r2.Read(make([]auditfmt.Record, 2)); n != 2 || err != nil {
		t.Errorf("Read: %d, %v", n, err)
	}
	if _, err := r2.ReadChain(make([]auditfmt.Record, 2), make([]hashchain.Pos, 2)); err == nil || !strings.Contains(err.Error(), "ReadChain after Read") {
		t.Errorf("ReadChain after Read: %v", err)
	}
}

// beforeOutbox is a row as stormaudit wrote dataset files before the
// outbox_depth and outbox_flushed columns (and the inbound columns after
// them).
type beforeOutbox struct {
	ClientID          string    `parquet:"client_id,dict"`
	RecordedAt        int64     `parquet:"recorded_at,timestamp(microsecond:utc)"`
	RecordedAtNs      *int32    `parquet:"recorded_at_ns,optional"`
	RecordedOffsetMin int32     `parquet:"recorded_offset_min"`
	Attempt           int64     `parquet:"attempt"`
	BackoffDelayS     float64   `parquet:"backoff_delay_s"`
	Outcome           string    `parquet:"outcome,dict"`
	CleanSession      bool      `parquet:"clean_session"`
	Schema            *int32    `parquet:"schema,optional"`
	HostID            *string   `parquet:"host_id,optional,dict"`
	Stage             *string   `parquet:"stage,optional,dict"`
	AttemptID         *string   `parquet:"attempt_id,optional"`
	RecordID          *string   `parquet:"record_id,optional"`
	DeviceSeq         *int64    `parquet:"device_seq,optional"`
	FailureClass      *string   `parquet:"failure_class,optional,dict"`
	ReasonCode        *int32    `parquet:"reason_code,optional"`
	CeilingS          *float64  `parquet:"ceiling_s,optional"`
	SessionPresent    *bool     `parquet:"session_present,optional"`
	Extra             *string   `parquet:"extra,optional"`
	Envelope          *string   `parquet:"envelope,optional"`
	Source            string    `parquet:"source,dict"`
	Line              int64     `parquet:"line"`
	Origin            *string   `parquet:"origin,optional"`
	Seq               *int64    `parquet:"seq,optional"`
	Link              *[32]byte `parquet:"link,optional"`
}

// TestReadFileWithoutOutboxColumns reads a dataset whose file was written
// before the outbox columns: both readers give every record with
// outbox_depth, outbox_flushed, inbound_redelivered, inbound_duplicates,
// outbox_dropped and inbound_expired absent (null), and the rest as
// written.
func TestReadFileWithoutOutboxColumns(t *testing.T) {
	recs := testkit.Records(31, 1500)
	rows := make([]beforeOutbox, len(recs))
	nws := make([]narrowed, len(recs))
	pos := make([]hashchain.Pos, len(recs))
	for i := range recs {
		recs[i].Has &^= auditfmt.HasOutboxDepth | auditfmt.HasOutboxFlushed | auditfmt.HasInboundRedelivered | auditfmt.HasInboundDuplicates |
			auditfmt.HasOutboxDropped | auditfmt.HasInboundExpired
		recs[i].OutboxDepth, recs[i].OutboxFlushed, recs[i].InboundRedelivered, recs[i].InboundDuplicates = 0, 0, 0, 0
		recs[i].OutboxDropped, recs[i].InboundExpired = 0, 0
		pos[i] = chainOf(&recs[i])
		var r row
		if err := toRow(&r, &nws[i], &recs[i], &pos[i], testkit.Sources); err != nil {
			t.Fatal(err)
		}
		rows[i] = beforeOutbox{r.ClientID, r.RecordedAt, r.RecordedAtNs, r.RecordedOffsetMin, r.Attempt, r.BackoffDelayS,
			r.Outcome, r.CleanSession, r.Schema, r.HostID, r.Stage, r.AttemptID, r.RecordID, r.DeviceSeq, r.FailureClass,
			r.ReasonCode, r.CeilingS, r.SessionPresent, r.Extra, r.Envelope, r.Source, r.Line, r.Origin, r.Seq, r.Link}
	}
	dir := t.TempDir()
	name := "part-00000.parquet"
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	sources, _ := json.Marshal(testkit.Sources)
	w := parquet.NewGenericWriter[beforeOutbox](f, parquet.MaxRowsPerRowGroup(400), parquet.KeyValueMetadata(MetaSources, string(sources)))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if fields := parquet.SchemaOf(beforeOutbox{}).Fields(); len(fields) != numColumns-6 {
		t.Fatalf("beforeOutbox has %d columns, want %d", len(fields), numColumns-6)
	}

	r, err := OpenFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, gotPos := make([]auditfmt.Record, len(recs)+1), make([]hashchain.Pos, len(recs)+1)
	n := 0
	for {
		k, err := r.ReadChain(got[n:], gotPos[n:])
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n != len(recs) {
		t.Fatalf("FileReader read %d records, want %d", n, len(recs))
	}
	for i := range recs {
		if got[i] != recs[i] || gotPos[i] != pos[i] {
			t.Fatalf("FileReader: row %d:\n got %+v %+v\nwant %+v %+v", i, got[i], gotPos[i], recs[i], pos[i])
		}
	}

	writeManifestFile(t, dir, &Manifest{Format: "stormaudit-dataset", SchemaVersion: 1, SortedBy: SortedBy,
		Files: []File{{Name: name, Rows: int64(len(recs)), RowGroups: 4}}, Rows: int64(len(recs))})
	ar, err := OpenArrow(dir, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer ar.Close()
	chained := make([]bool, len(recs))
	for i := range chained {
		chained[i] = true
	}
	at := 0
	for {
		rec, err := ar.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, rec, recs[at:], chained[at:])
		at += int(rec.NumRows())
		rec.Release()
	}
	if at != len(recs) {
		t.Errorf("ArrowReader read %d rows, want %d", at, len(recs))
	}
}

// thirdParty is how another program might write our columns: every column
// optional (as pyarrow does), extra columns, another order, int64 for the
// int32 columns' logical width.
type thirdParty struct {
	Comment           string  `parquet:"comment"`
	Line              int64   `parquet:"line"`
	Source            string  `parquet:"source"`
	ClientID          *string `parquet:"client_id,optional"`
	RecordedAt        int64   `parquet:"recorded_at,timestamp(nanosecond)"`
	RecordedOffsetMin int32   `parquet:"recorded_offset_min"`
	Attempt           *int64  `parquet:"attempt,optional"`
	BackoffDelayS     float64 `parquet:"backoff_delay_s"`
	Outcome           string  `parquet:"outcome,optional"`
	CleanSession      bool    `parquet:"clean_session"`
	Schema            *int32  `parquet:"schema,optional"`
	HostID            string  `parquet:"host_id"`
	Stage             string  `parquet:"stage,optional"`
	AttemptID         string  `parquet:"attempt_id,optional"`
	RecordID          string  `parquet:"record_id,optional"`
	DeviceSeq         *int64  `parquet:"device_seq,optional"`
	FailureClass      string  `parquet:"failure_class,optional"`
	ReasonCode        *int32  `parquet:"reason_code,optional,int(16)"`
	CeilingS          float64 `parquet:"ceiling_s,optional"`
	SessionPresent    *bool   `parquet:"session_present,optional"`
	Extra             string  `parquet:"extra,optional"`
	Envelope          string  `parquet:"envelope,optional"`
}

func TestReadThirdPartyRows(t *testing.T) {
	id := func(s string) *string { return &s }
	one := int64(1)
	good := thirdParty{ClientID: id("d1"), Attempt: &one, Outcome: "connected", Source: "in.csv", Line: 7, HostID: "h"}
	rows := []thirdParty{good, good, good, good, good, good}
	rows[1].Outcome = "exploded"
	rows[2].Attempt = nil
	rows[3].Stage = "orbit"
	rows[4].RecordedOffsetMin = 24 * 60
	rows[5].Attempt = new(int64(-2))
	path := writeForeign(t, rows)
	r, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs := make([]auditfmt.Record, 10)
	var got []auditfmt.Record
	var errs []string
	for {
		n, err := r.Read(recs)
		got = append(got, recs[:n]...)
		if err == io.EOF {
			break
		}
		var re *RowError
		if !errors.As(err, &re) && err != nil {
			t.Fatal(err)
		}
		if err != nil {
			errs = append(errs, strings.TrimPrefix(err.Error(), path+": "))
		}
	}
	wantErrs := []string{
		`row 1: outcome: expected one of connected, backoff_wait, rate_limited_wait, attempt_failed, refused, disconnected, gave_up, stopped, found "exploded"`,
		`row 2: attempt: expected a value, found null`,
		`row 3: stage: expected one of link, address, session, service, found "orbit"`,
		`row 4: recorded_offset_min: expected minutes within ±23:59, found 1440`,
		`row 5: attempt: expected an integer >= 0, found -2`,
	}
	if !slices.Equal(errs, wantErrs) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(errs, "\n"), strings.Join(wantErrs, "\n"))
	}
	want := auditfmt.Record{ClientID: "d1", Attempt: 1, Outcome: auditfmt.Connected, HostID: "h", Source: 0, Line: 7}
	if len(got) != 1 || got[0] != want {
		t.Errorf("records: %+v\nwant [%+v]", got, want)
	}
	if s := r.Sources(); !slices.Equal(s, []string{"in.csv"}) {
		t.Errorf("Sources() = %q", s)
	}
}

// BenchmarkWriteFile writes 1Mi typical records (typicalRecords) to one
// file, fsync included, without and with chain positions (chainOf; its
// links are random-looking hashes, 32 incompressible bytes a row).
// BenchmarkWriteEngines compares FileWriter with the other ways of writing
// the same file. Notes from tuning them on a shared 2-vCPU machine with
// -cpu 1 (variants alternated in one run; absolute numbers drift by 30%):
//
//   - Encoding the column chunks ourselves (chunkFile) against parquet-go's
//     row writer: 1.5x (records) to 1.7x (chained) the rows per
//     CPU-second, old and new FileWriter alternated; arrow-go's typed
//     column writers, pqarrow from Arrow builders and parquet-go's
//     ColumnWriters fed parquet.Values were all slower than the row
//     writer (docs/performance.md has the figures).
//   - zstd SpeedFastest: 18.2 B/row; SpeedDefault: 14.8 B/row (19% smaller)
//     but 1.25x the CPU. Fastest is the default, for ingest throughput.
//   - zstd is most of what is left, and most of it on recorded_at, line
//     and seq, 8-byte little-endian numbers that match in short runs.
//     DELTA_BINARY_PACKED for them: 2.1M against 1.6M rows/CPU-s and 4%
//     smaller. arrow-go's delta decoder never frees a 64-byte buffer, which
//     the tests' allocator (leakAllocator) lets go; kept for every integer
//     column since the stream (ingest/stream.go) made the writer the
//     longest stage of an ingest of sorted input.
//   - origin dictionary-encoded, link stored uncompressed, in the row
//     writer (struct tags): 0.68M to 0.82M rows/CPU-s (medians of three
//     noisy rounds, one round the other way); kept in chunkFile.
//   - Page cut at 256 KiB of values, against 1 MiB: 3 to 5% slower, 0.3%
//     larger files, 45 MB less peak RSS in ingest.
//   - No page header statistics and no min/max for the string columns other
//     than client_id and origin: the row writer +25% rows/s, same size.
//   - v2 data pages: no faster, 1.3% larger; v1 kept for reader support.
//   - PLAIN against DELTA_LENGTH_BYTE_ARRAY strings: same speed, 0.5%
//     larger; PLAIN kept (arrow-go's decoder leaks allocator memory).
func BenchmarkWriteFile(b *testing.B) {
	recs := typicalRecords(1 << 20)
	b.Run("records", func(b *testing.B) { benchWrite(b, recs, nil) })
	pos := make([]hashchain.Pos, len(recs))
	for i := range recs {
		pos[i] = chainOf(&recs[i])
	}
	b.Run("chained", func(b *testing.B) { benchWrite(b, recs, pos) })
}

// benchWrite writes recs, with pos if not nil, as ingest does: 8192 at a
// time.
func benchWrite(b *testing.B, recs []auditfmt.Record, pos []hashchain.Pos) {
	path := filepath.Join(b.TempDir(), "bench.parquet")
	var size int64
	cpu := testkit.CPUTime()
	for b.Loop() {
		w, err := CreateFile(path, testkit.Sources)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(recs); i += 8192 {
			j := min(i+8192, len(recs))
			if pos == nil {
				err = w.Write(recs[i:j])
			} else {
				err = w.WriteChained(recs[i:j], pos[i:j])
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		st, _ := os.Stat(path)
		size = st.Size()
	}
	reportRows(b, len(recs), cpu)
	b.ReportMetric(float64(size)/float64(len(recs)), "B/row")
}

func BenchmarkReadFile(b *testing.B) {
	recs := typicalRecords(1 << 20)
	path := filepath.Join(b.TempDir(), "bench.parquet")
	writeTestFile(b, path, recs, true)
	buf := make([]auditfmt.Record, 4096)
	cpu := testkit.CPUTime()
	for b.Loop() {
		r, err := OpenFile(path)
		if err != nil {
			b.Fatal(err)
		}
		total := 0
		for {
			n, err := r.Read(buf)
			total += n
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
		if total != len(recs) {
			b.Fatalf("read %d rows, want %d", total, len(recs))
		}
	}
	reportRows(b, len(recs), cpu)
}

// reportRows reports rows per second of wall time and, where it can be
// measured, per second of the process's CPU time (user and system, GC
// included), which other load on a shared machine disturbs less. cpu is
// testkit.CPUTime() before the loop.
func reportRows(b *testing.B, rows int, cpu time.Duration) {
	total := float64(rows) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "rows/s")
	if used := testkit.CPUTime() - cpu; used > 0 {
		b.ReportMetric(total/used.Seconds(), "rows/cpu-s")
	}
}

// TestNullsAtWriteBoundaries pins a parquet-go v0.32.0 bug that the row
// type worked around when parquet-go's row writer wrote the files: in a
// 64-row write, if the last run of present values starts at row y, is y
// rows long and only nulls follow, the writer marked those nulls present
// (it compares the shifted null bitmap with (1<<y)-1). Each 64-row block
// here has that shape for another y; FileWriter must keep every null. The test reads the file with
// parquet-go's row reader, not ours, which cannot tell a null string from
// an empty one.
func TestNullsAtWriteBoundaries(t *testing.T) {
	recs := testkit.Records(21, 1024)
	for i := range recs {
		y := 1 + i/64%30
		if k := i % 64; k == y-1 || k >= 2*y {
			r := &recs[i]
			r.Has, r.Stage, r.FailureClass = 0, 0, 0
			r.HostID, r.AttemptID, r.RecordID, r.Extra, r.Envelope = "", "", "", "", ""
		}
	}
	path := filepath.Join(t.TempDir(), "f.parquet")
	w, err := CreateFile(path, testkit.Sources)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(recs); err != nil { // one write: blocks start at multiples of 64
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
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
	rows := make([]parquet.Row, len(recs))
	n, err := pf.RowGroups()[0].Rows().ReadRows(rows)
	if n != len(recs) || err != nil && err != io.EOF {
		t.Fatalf("ReadRows: %d, %v", n, err)
	}
	for i, row := range rows {
		want := wantRow(&recs[i], false)
		var ns any // the file's recorded_at_ns
		if _, rem := splitTime(recs[i].RecordedAt); rem != 0 {
			ns = rem
		}
		want = slices.Insert(want, colRecordedAtNs, ns)
		for c, v := range row {
			if v.IsNull() != (want[c] == nil) {
				t.Errorf("row %d, column %s: null is %v, want %v", i, columnNames[c], v.IsNull(), want[c] == nil)
			}
		}
	}
}
