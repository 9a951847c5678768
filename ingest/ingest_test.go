package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// readDataset reads every record of a dataset in stored order.
func readDataset(t *testing.T, dir string) (*dataset.Manifest, []auditfmt.Record) {
	t.Helper()
	m, err := dataset.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var all []auditfmt.Record
	if err := dataset.Scan(dir, func(recs []auditfmt.Record, _ []string) error {
		all = append(all, recs...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return m, all
}

func TestIngestSpillMatchesInMemory(t *testing.T) {
	lines := testkit.GenLines(5000, 37, 1)
	// Redeliver 300 lines, some far from their first copy.
	for i := range 300 {
		lines = append(lines, lines[i*7])
	}
	in := testkit.WriteInput(t, "fleet.ndjson", lines)
	ctx := context.Background()
	small, big := filepath.Join(t.TempDir(), "spill"), filepath.Join(t.TempDir(), "mem")
	m1, err := Run(ctx, small, []Source{{Name: in}}, Options{ChunkRecords: 97, FileRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	m2, err := Run(ctx, big, []Source{{Name: in}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*dataset.Manifest{m1, m2} {
		if got, want := m.Totals, (dataset.Counts{Lines: 5300, Accepted: 5000, Duplicates: 300}); got != want {
			t.Errorf("totals = %+v, want %+v", got, want)
		}
	}
	if len(m1.Files) < 5 {
		t.Errorf("FileRows 1000: got %d files, want at least 5", len(m1.Files))
	}
	_, a := readDataset(t, small)
	_, b := readDataset(t, big)
	if len(a) != len(b) {
		t.Fatalf("spilled ingest stored %d rows, in-memory %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("row %d differs:\nspill %+v\nmem   %+v", i, a[i], b[i])
		}
		if i > 0 && compareRows(&a[i-1], &a[i]) >= 0 {
			t.Fatalf("rows %d and %d out of order", i-1, i)
		}
		if i > 0 && auditfmt.SameRecord(&a[i-1], &a[i]) {
			t.Fatalf("rows %d and %d are duplicates", i-1, i)
		}
	}
	assertDevicesInOneFile(t, small, m1)
	if left, _ := filepath.Glob(filepath.Join(small, "stormaudit-run-*")); len(left) > 0 {
		t.Errorf("run files left behind: %v", left)
	}
}

// assertDevicesInOneFile fails unless each device's rows are in one file.
func assertDevicesInOneFile(t *testing.T, dir string, m *dataset.Manifest) {
	t.Helper()
	seen := map[string]string{}
	for _, f := range m.Files {
		fr, err := dataset.OpenFile(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]auditfmt.Record, 64)
		for {
			n, err := fr.Read(buf)
			for _, r := range buf[:n] {
				if prev, ok := seen[r.ClientID]; ok && prev != f.Name {
					t.Errorf("%s is in %s and %s", r.ClientID, prev, f.Name)
				}
				seen[r.ClientID] = f.Name
			}
			if err != nil {
				break
			}
		}
		fr.Close()
	}
}

func TestIngestKeepsFirstCopyAndLogsDuplicates(t *testing.T) {
	rec := `{"client_id": "dev-1", "attempt": 1, "backoff_delay_s": 0.5, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34.979964+00:00"}`
	env := `{"message": "mqtt_reconnect", "audit": ` + rec + `}`
	a := testkit.WriteInput(t, "a.ndjson", []string{rec, rec})
	b := testkit.WriteInput(t, "b.ndjson", []string{env})
	dir := filepath.Join(t.TempDir(), "ds")
	m, err := Run(context.Background(), dir, []Source{{Name: a}, {Name: b}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Inputs[0].Accepted != 1 || m.Inputs[0].Duplicates != 1 || m.Inputs[1].Duplicates != 1 {
		t.Errorf("inputs = %+v", m.Inputs)
	}
	_, rows := readDataset(t, dir)
	if len(rows) != 1 || rows[0].Line != 1 || rows[0].Source != 0 {
		t.Fatalf("kept %+v, want line 1 of a.ndjson", rows)
	}
	got, _ := os.ReadFile(filepath.Join(dir, dataset.DuplicatesName))
	want := fmt.Sprintf(`{"source":%q,"line":2,"client_id":"dev-1","duplicate_of":{"source":%q,"line":1}}`+"\n"+
		`{"source":%q,"line":1,"client_id":"dev-1","duplicate_of":{"source":%q,"line":1}}`+"\n", a, a, b, a)
	if string(got) != want {
		t.Errorf("duplicates.ndjson:\n%s\nwant\n%s", got, want)
	}
}

func TestIngestQuarantinesEveryReject(t *testing.T) {
	good := testkit.GenLines(3, 2, 2)
	long := `{"client_id": "` + strings.Repeat("x", auditfmt.MaxLineBytes) + `"}`
	lines := []string{good[0], `{"client_id": "d", "attempt": -1}`, "", good[1], "\xff\xfe not utf8", long, good[2], `{"oops`}
	in := testkit.WriteInput(t, "mixed.ndjson", lines)
	dir := filepath.Join(t.TempDir(), "ds")
	m, err := Run(context.Background(), dir, []Source{{Name: in}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Totals, (dataset.Counts{Lines: 8, Accepted: 3, Rejected: 5}); got != want {
		t.Errorf("totals = %+v, want %+v", got, want)
	}
	f, err := os.Open(filepath.Join(dir, dataset.RejectsName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	var gotLines []int64
	for sc.Scan() {
		var e rejectEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		gotLines = append(gotLines, e.Line)
		if !strings.HasPrefix(e.Error, fmt.Sprintf("%s:%d: ", in, e.Line)) {
			t.Errorf("error %q does not start with file:line", e.Error)
		}
		raw := []byte(e.Raw)
		if e.RawBase64 != nil {
			raw = e.RawBase64
		}
		want := lines[e.Line-1]
		if e.RawLength > 0 {
			if e.RawLength != int64(len(want)) {
				t.Errorf("line %d: raw_length %d, want %d", e.Line, e.RawLength, len(want))
			}
			want = want[:min(len(want), auditfmt.MaxLineBytes)]
		}
		if e.RawSHA256 != "" { // the start of a long line, and the digest of what was read of it
			if sum := sha256.Sum256([]byte(want)); hex.EncodeToString(sum[:]) != e.RawSHA256 || len(raw) > MaxRejectRaw {
				t.Errorf("line %d: raw_sha256 %s of %d bytes kept", e.Line, e.RawSHA256, len(raw))
			}
			want = want[:len(raw)]
		}
		if string(raw) != want {
			t.Errorf("line %d: raw is not the line verbatim", e.Line)
		}
	}
	if fmt.Sprint(gotLines) != "[2 3 5 6 8]" {
		t.Errorf("rejected lines %v, want [2 3 5 6 8]", gotLines)
	}
}

func TestIngestGzipStdinAndCSV(t *testing.T) {
	lines := testkit.GenLines(50, 5, 3)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Join(lines, "\n")))
	zw.Close()
	// A gzip file whose name says nothing, and the same bytes on stdin.
	plainName := filepath.Join(t.TempDir(), "upload.bin")
	os.WriteFile(plainName, gz.Bytes(), 0o644)
	csv := "client_id,attempt,backoff_delay_s,outcome,clean_session,recorded_at\n" +
		"dev-x,0,1.5,backoff_wait,false,2026-11-30T14:17:34.979964+00:00\n"
	csvName := filepath.Join(t.TempDir(), "gw.csv")
	os.WriteFile(csvName, []byte(csv), 0o644)
	dir := filepath.Join(t.TempDir(), "ds")
	m, err := Run(context.Background(), dir, []Source{{Name: plainName}, {Name: "-", Stdin: bytes.NewReader(gz.Bytes())}, {Name: csvName}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := m.Inputs
	if !in[0].Gzip || in[0].Format != FormatNDJSON || in[0].Accepted != 50 {
		t.Errorf("gzip file: %+v", in[0])
	}
	if !in[1].Gzip || in[1].Duplicates != 50 || in[1].Bytes != int64(gz.Len()) {
		t.Errorf("stdin: %+v", in[1])
	}
	if in[0].SHA256 != in[1].SHA256 {
		t.Errorf("same bytes, different SHA-256: %s %s", in[0].SHA256, in[1].SHA256)
	}
	if in[2].Format != FormatCSV || in[2].Accepted != 1 {
		t.Errorf("csv: %+v", in[2])
	}
	// Our own Parquet is an input too: re-ingesting a dataset's file keeps every row.
	again := filepath.Join(t.TempDir(), "again")
	m2, err := Run(context.Background(), again, []Source{{Name: filepath.Join(dir, m.Files[0].Name)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m2.Inputs[0].Format != FormatParquet || m2.Rows != m.Rows {
		t.Errorf("parquet re-ingest: %+v, rows %d want %d", m2.Inputs[0], m2.Rows, m.Rows)
	}
}

func TestIngestRefusesNonEmptyOutput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	_, err := Run(context.Background(), dir, []Source{{Name: "-", Stdin: strings.NewReader("")}}, Options{})
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("err = %v, want a not-empty error", err)
	}
}

// A record whose numbers RFC 8785 cannot write exactly has no canonical
// bytes and could not be chained: it is rejected at ingest, by field.
func TestIngestRejectsRecordsWithoutCanonicalBytes(t *testing.T) {
	lines := []string{
		`{"client_id": "d", "attempt": 9007199254740993, "backoff_delay_s": 1.0, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34+00:00"}`,
		`{"client_id": "d", "attempt": 1, "backoff_delay_s": 1.0, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34+00:00", "serial": 12345678901234567890}`,
		`{"client_id": "d", "attempt": 1, "backoff_delay_s": 1.0, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34+00:00", "serial": "12345678901234567890"}`,
		`{"client_id": "d", "attempt": 2, "backoff_delay_s": 1.0, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34+00:00", "outbox_depth": 9007199254740993}`,
	}
	dir := filepath.Join(t.TempDir(), "ds")
	m, err := Run(context.Background(), dir, []Source{{Name: testkit.WriteInput(t, "big.ndjson", lines)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Totals, (dataset.Counts{Lines: 4, Accepted: 1, Rejected: 3}); got != want {
		t.Fatalf("totals = %+v, want %+v", got, want)
	}
	b, _ := os.ReadFile(filepath.Join(dir, dataset.RejectsName))
	for _, want := range []string{`"field":"attempt"`, `"field":"serial"`, `big.ndjson:4: outbox_depth: expected an integer within ±2^53 (9007199254740992), exact in RFC 8785 JSON, found 9007199254740993`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("rejects.ndjson lacks %s:\n%s", want, b)
		}
	}
}

// A Parquet input's row that does not decode to a valid record is
// quarantined like a bad line, and the rows after it are still read.
func TestIngestQuarantinesBadParquetRows(t *testing.T) {
	good := auditfmt.Record{ClientID: "dev-1", Outcome: auditfmt.BackoffWait, RecordedAt: 1, Line: 1}
	bad := good
	bad.Attempt, bad.RecordedAt, bad.Line = -1, 2, 2
	last := good
	last.RecordedAt, last.Line = 3, 3
	path := filepath.Join(t.TempDir(), "third-party.parquet")
	fw, err := dataset.CreateFile(path, []string{"x.ndjson"})
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write([]auditfmt.Record{good, bad, last}); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ds")
	m, err := Run(context.Background(), dir, []Source{{Name: path}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Totals, (dataset.Counts{Lines: 3, Accepted: 2, Rejected: 1}); got != want {
		t.Fatalf("totals = %+v, want %+v", got, want)
	}
	b, _ := os.ReadFile(filepath.Join(dir, dataset.RejectsName))
	if !strings.Contains(string(b), `"line":2,"field":"attempt"`) {
		t.Errorf("rejects.ndjson = %s", b)
	}
}

// endless is an input that never ends, as a pipe from a live collector.
type endless struct{ line []byte }

func (e endless) Read(p []byte) (int, error) {
	n := 0
	for n+len(e.line) <= len(p) {
		n += copy(p[n:], e.line)
	}
	return n, nil
}

func TestIngestStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	line := []byte(testkit.GenLines(1, 1, 1)[0] + "\n")
	done := make(chan error, 1)
	dir := filepath.Join(t.TempDir(), "ds")
	go func() {
		_, err := Run(ctx, dir, []Source{{Name: "-", Stdin: endless{line}}}, Options{})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Ingest still running 10 s after its context was cancelled")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a cancelled ingest left %d files in the output directory", len(ents))
	}
}

// One large record must not make the sorter reserve memory for a whole
// chunk of records that size (it once tried 262,144 x 200 KB).
func TestIngestLargeRecord(t *testing.T) {
	big := `{"client_id": "d", "attempt": 1, "backoff_delay_s": 1.0, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34+00:00", "blob": "` + strings.Repeat("x", 900_000) + `"}`
	dir := filepath.Join(t.TempDir(), "ds")
	m, err := Run(context.Background(), dir, []Source{{Name: testkit.WriteInput(t, "big.ndjson", append([]string{big}, testkit.GenLines(10, 2, 1)...))}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Totals.Accepted != 11 {
		t.Errorf("totals = %+v", m.Totals)
	}
}

// A failed ingest leaves the output directory empty, so that the corrected
// command can run again.
func TestIngestFailureLeavesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	good := testkit.WriteInput(t, "a.ndjson", testkit.GenLines(10, 2, 1))
	noHeader := testkit.WriteInput(t, "b.csv", []string{"attempt,outcome", "1,connected"})
	if _, err := Run(context.Background(), dir, []Source{{Name: good}, {Name: noHeader}}, Options{}); err == nil {
		t.Fatal("a CSV without client_id was ingested")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the failed ingest left %d files", len(ents))
	}
	if _, err := Run(context.Background(), dir, []Source{{Name: good}}, Options{}); err != nil {
		t.Fatalf("the corrected ingest: %v", err)
	}
}

// The 1 MiB line limit is on the line's content: a CRLF line's \r does
// not count.
func TestIngestLineLimitIgnoresCR(t *testing.T) {
	head := `{"client_id": "d", "attempt": 1, "backoff_delay_s": 1.0, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:34+00:00", "blob": "`
	line := head + strings.Repeat("x", auditfmt.MaxLineBytes-len(head)-2) + `"}`
	if len(line) != auditfmt.MaxLineBytes {
		t.Fatalf("test line is %d bytes", len(line))
	}
	path := filepath.Join(t.TempDir(), "crlf.ndjson")
	os.WriteFile(path, []byte(line+"\r\n"+line+"x\r\n"), 0o644)
	m, err := Run(context.Background(), filepath.Join(t.TempDir(), "ds"), []Source{{Name: path}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Totals, (dataset.Counts{Lines: 2, Accepted: 1, Rejected: 1}); got != want {
		t.Errorf("totals = %+v, want %+v (a line of exactly the limit, then one byte over)", got, want)
	}
}
