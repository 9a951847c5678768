package hashchain

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
)

// testLog is the log name of the collector-log tests.
const testLog = "stormaudit.example/collector"

// genRecord returns the i-th record of a deterministic stream from a
// fleet of 23 devices: reference-client records, some with optional
// fields, unknown members, an envelope (which the log drops) or strings
// that need escapes.
func genRecord(i int) auditfmt.Record { return genFleetRecord(i, 23) }

// genFleetRecord is genRecord from a fleet of the given number of devices.
func genFleetRecord(i, devices int) auditfmt.Record {
	outcomes := []auditfmt.Outcome{auditfmt.BackoffWait, auditfmt.AttemptFailed, auditfmt.BackoffWait, auditfmt.Connected, auditfmt.RateLimitedWait, auditfmt.Refused}
	r := auditfmt.Record{
		ClientID:      "dev-" + strconv.Itoa(i%devices),
		Attempt:       int64(i % 9),
		BackoffDelayS: float64(i%1000) * 0.125,
		Outcome:       outcomes[i%len(outcomes)],
		CleanSession:  i%3 == 0,
		RecordedAt:    time.Date(2026, 11, 30, 14, 17, 34, 0, time.UTC).UnixNano() + int64(i)*1_234_567,
		OffsetMin:     int16(i%5-2) * 90,
	}
	switch i % 7 {
	case 1:
		r.HostID, r.Stage, r.Has, r.DeviceSeq = "gw-"+strconv.Itoa(i%4), auditfmt.StageSession, auditfmt.HasDeviceSeq, int64(i)
	case 2:
		r.Extra = `{"rssi_dbm":-71,"cell":{"id":31337,"band":"B20"},"tags":["a","\u00e9"]}`
	case 3:
		r.Envelope = `{"message":"mqtt_reconnect","levelname":"INFO"}`
	case 4:
		r.RecordID, r.AttemptID = "rec-\"quoted\"\t"+strconv.Itoa(i), "att/é/😀"
		r.Has, r.ReasonCode, r.FailureClass = auditfmt.HasReasonCode, 5, auditfmt.FailAuth
	case 5:
		r.Has, r.CeilingS, r.SessionPresent, r.Schema = auditfmt.HasCeiling|auditfmt.HasSessionPresent|auditfmt.HasSchema, 120, true, 1
	}
	return r
}

// recordBytes returns R of r, which says whether two records are the same.
func recordBytes(t testing.TB, r *auditfmt.Record) []byte {
	t.Helper()
	c := *r
	c.Envelope = ""
	R, err := AppendRecordBytes(nil, &c)
	if err != nil {
		t.Fatal(err)
	}
	return R
}

// readRecords decodes the records of a collector log.
func readRecords(t testing.TB, path string) []auditfmt.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d auditfmt.Decoder
	var recs []auditfmt.Record
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r auditfmt.Record
		if err := d.Decode(bytes.TrimSuffix(line, []byte("\n")), &r); err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// logLeaves recomputes the tree leaves of a collector log from its lines,
// without the logState: each leaf from its line's chain envelope.
func logLeaves(t testing.TB, path string) LeafHashes {
	t.Helper()
	var leaves LeafHashes
	for i, r := range readRecords(t, path) {
		origin, seq, link, ok, err := ParseChainEnvelope(r.Envelope)
		if !ok || err != nil {
			t.Fatalf("line %d: envelope %s: %v, %v", i+1, r.Envelope, ok, err)
		}
		leaves = append(leaves, Leaf(Pos{Origin: origin, Seq: seq, Link: link}))
	}
	return leaves
}

func openTestWriter(t testing.TB, path string, signer note.Signer) *Writer {
	t.Helper()
	w, rec, err := OpenWriter(path, WriterOptions{Log: testLog, Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	if rec != nil {
		t.Fatalf("unexpected recovery: %v", rec)
	}
	return w
}

// appendRecords appends genRecord(from) to genRecord(to-1) and checks
// their positions against the chains so far (seqs per client id, by
// counting).
func appendRecords(t testing.TB, w *Writer, from, to int, seqs map[string]int64) {
	t.Helper()
	for i := from; i < to; i++ {
		r := genRecord(i)
		pos, err := w.Append(&r)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		want := Position{Origin: testLog + "/" + r.ClientID, Seq: seqs[r.ClientID], Index: int64(i)}
		if pos.Origin != want.Origin || pos.Seq != want.Seq || pos.Index != want.Index {
			t.Fatalf("append %d: position %+v, want %+v", i, pos, want)
		}
		seqs[r.ClientID]++
	}
}

func TestWriterRoundTrip(t *testing.T) {
	signer, verifiers := testKeys(t)
	path := filepath.Join(t.TempDir(), "collector.ndjson")
	seqs := map[string]int64{}

	w := openTestWriter(t, path, signer)
	appendRecords(t, w, 0, 100, seqs)
	c1, err := w.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	appendRecords(t, w, 100, 130, seqs) // left unsealed
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if c1.Origin != testLog || c1.Size != 100 {
		t.Fatalf("checkpoint %+v", c1)
	}

	rep, err := ReadLog(path, verifiers)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Records != 130 || len(rep.Origins) != 23 || rep.Log != testLog || rep.Checkpoint == nil || *rep.Checkpoint != c1 ||
		!rep.Signed || !rep.SignaturesChecked || len(rep.Signers) != 1 || rep.Signers[0] != "stormaudit.example/test-only" ||
		rep.Unsealed != 30 || rep.UnsealedFrom != 101 {
		t.Fatalf("report %+v", rep)
	}
	for _, o := range rep.Origins {
		if o.Records != seqs[strings.TrimPrefix(o.Origin, testLog+"/")] {
			t.Errorf("origin %s: %d records, want %d", o.Origin, o.Records, seqs[o.Origin])
		}
	}
	// Unchecked: the signature is reported, not verified.
	if rep, err := ReadLog(path, nil); err != nil || !rep.Signed || rep.SignaturesChecked || len(rep.Signers) != 1 {
		t.Fatalf("ReadLog without verifiers: %+v, %v", rep, err)
	}
	// The records read back as they were appended.
	for i, r := range readRecords(t, path) {
		g := genRecord(i)
		if !bytes.Equal(recordBytes(t, &r), recordBytes(t, &g)) {
			t.Fatalf("record %d reads back as %s, want %s", i, recordBytes(t, &r), recordBytes(t, &g))
		}
	}

	// Reopen, append more, seal again: the new tree extends the old one.
	w = openTestWriter(t, path, signer)
	appendRecords(t, w, 130, 257, seqs)
	c2, err := w.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if c2.Size != 257 {
		t.Fatalf("second checkpoint %+v", c2)
	}
	rep, err = ReadLog(path, verifiers)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Records != 257 || rep.Unsealed != 0 || rep.UnsealedFrom != 0 || rep.Root != c2.Root {
		t.Fatalf("report %+v", rep)
	}
	leaves := logLeaves(t, path)
	hr := leaves.HashReader()
	for _, c := range []Checkpoint{c1, c2} {
		if root, err := tlog.TreeHash(c.Size, hr); err != nil || root != c.Root {
			t.Fatalf("tree of the first %d leaves: %v, %v; checkpoint says %v", c.Size, root, err, c.Root)
		}
	}
	proof, err := tlog.ProveTree(c2.Size, c1.Size, hr)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlog.CheckTree(proof, c2.Size, c2.Root, c1.Size, c1.Root); err != nil {
		t.Fatalf("consistency proof from %d to %d: %v", c1.Size, c2.Size, err)
	}
}

func TestWriterPositionsAndLinks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "collector.ndjson")
	w := openTestWriter(t, path, nil)
	links := map[string]tlog.Hash{}
	for i := range 50 {
		r := genRecord(i)
		pos, err := w.Append(&r)
		if err != nil {
			t.Fatal(err)
		}
		prev, ok := links[pos.Origin]
		if !ok {
			prev = Genesis(pos.Origin)
		}
		if want := NextLink(prev, RecordHash(recordBytes(t, &r))); pos.Link != want {
			t.Fatalf("record %d: link %x, want %x", i, pos.Link, want)
		}
		links[pos.Origin] = pos.Link
	}
	c, err := w.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Without a signer the checkpoint file is the bare body.
	body, err := os.ReadFile(path + ".checkpoint")
	if err != nil || !bytes.Equal(body, c.Format()) {
		t.Fatalf("checkpoint file %q, %v; want %q", body, err, c.Format())
	}
	rep, err := ReadLog(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Signed || rep.Records != 50 {
		t.Fatalf("report %+v", rep)
	}
	for _, o := range rep.Origins {
		if o.Head != links[o.Origin] {
			t.Errorf("%s: head %x, want %x", o.Origin, o.Head, links[o.Origin])
		}
	}
	// A signed checkpoint is required when verifiers are given.
	_, verifiers := testKeys(t)
	if _, err := ReadLog(path, verifiers); err == nil || !strings.Contains(err.Error(), "not signed") {
		t.Fatalf("ReadLog of an unsigned checkpoint with verifiers: %v", err)
	}
	os.Remove(path + ".checkpoint")
	if _, err := ReadLog(path, verifiers); err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Fatalf("ReadLog without a checkpoint, with verifiers: %v", err)
	}
	if rep, err := ReadLog(path, nil); err != nil || rep.Checkpoint != nil || rep.Unsealed != 50 || rep.UnsealedFrom != 1 || rep.Log != testLog {
		t.Fatalf("ReadLog without a checkpoint: %+v, %v", rep, err)
	}
}

func TestWriterEmptyLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.ndjson")
	w := openTestWriter(t, path, nil)
	c, err := w.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if c.Size != 0 || c.Root != emptyRoot {
		t.Fatalf("checkpoint of the empty log: %+v", c)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if rep, err := ReadLog(path, nil); err != nil || rep.Records != 0 || rep.Checkpoint == nil || rep.Log != testLog {
		t.Fatalf("ReadLog of the empty log: %+v, %v", rep, err)
	}
	w = openTestWriter(t, path, nil)
	appendRecords(t, w, 0, 3, map[string]int64{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if rep, err := ReadLog(path, nil); err != nil || rep.Records != 3 || rep.Unsealed != 3 {
		t.Fatalf("ReadLog: %+v, %v", rep, err)
	}
}

func TestWriterAppendErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "collector.ndjson")
	w := openTestWriter(t, path, nil)
	good := genRecord(0)
	for _, tt := range []struct {
		name  string
		edit  func(*auditfmt.Record)
		field string
	}{
		{"invalid", func(r *auditfmt.Record) { r.Attempt = -1 }, "attempt"},
		{"no client id", func(r *auditfmt.Record) { r.ClientID = "" }, "client_id"},
		{"not UTF-8", func(r *auditfmt.Record) { r.HostID = "gw\xff" }, "host_id"},
		{"inexact number", func(r *auditfmt.Record) { r.Extra = `{"big":12345678901234567890}` }, "big"},
		{"extra not an object", func(r *auditfmt.Record) { r.Extra = `[1]` }, "extra"},
		{"field name in extra", func(r *auditfmt.Record) { r.Extra = `{"attempt":1}` }, "attempt"},
	} {
		r := good
		tt.edit(&r)
		_, err := w.Append(&r)
		var fe *auditfmt.FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("%s: Append error %v, want a FieldError for %q", tt.name, err, tt.field)
		}
	}
	// A line longer than the decoder reads.
	r := good
	r.Extra = `{"blob":"` + strings.Repeat("x", auditfmt.MaxLineBytes) + `"}`
	if _, err := w.Append(&r); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("Append of an over-long record: %v", err)
	}
	// The failures left no trace: the next record is seq 0, index 0.
	r = good
	r.Extra = "{ \"x\":{}, \"spaced\" : [ 1.50, \"a b\\u00e9\" ] \n}" // written in its RFC 8785 form
	pos, err := w.Append(&r)
	if err != nil || pos.Seq != 0 || pos.Index != 0 {
		t.Fatalf("Append after errors: %+v, %v", pos, err)
	}
	r = good
	r.Envelope = `{"message":"dropped"}`
	r.Source, r.Line = 7, 99
	if pos, err := w.Append(&r); err != nil || pos.Seq != 1 {
		t.Fatalf("Append: %+v, %v", pos, err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(&good); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	if err := w.Sync(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sync after Close: %v", err)
	}
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	rep, err := ReadLog(path, nil)
	if err != nil || rep.Records != 2 {
		t.Fatalf("ReadLog: %+v, %v", rep, err)
	}
	recs := readRecords(t, path)
	if recs[0].Extra != `{"spaced":[1.5,"a bé"],"x":{}}` || !strings.HasPrefix(recs[1].Envelope, `{"chain":`) || strings.Contains(recs[1].Envelope, "dropped") {
		t.Errorf("records read back: %+v", recs)
	}
}

func TestWriterOptions(t *testing.T) {
	dir := t.TempDir()
	for _, log := range []string{"", "a\nb", "bad\xff"} {
		if _, _, err := OpenWriter(filepath.Join(dir, "x.ndjson"), WriterOptions{Log: log}); err == nil {
			t.Errorf("OpenWriter with Log %q: no error", log)
		}
	}
	// A log keeps its name.
	path := filepath.Join(dir, "collector.ndjson")
	w := openTestWriter(t, path, nil)
	appendRecords(t, w, 0, 3, map[string]int64{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, _, err := OpenWriter(path, WriterOptions{Log: "other.example/log"})
	var le *LogError
	if !errors.As(err, &le) || le.Line != 1 || !strings.Contains(err.Error(), `written under the log name "stormaudit.example/collector"`) {
		t.Fatalf("OpenWriter under another name: %v", err)
	}
	w = openTestWriter(t, path, nil)
	if _, err := w.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, _, err := OpenWriter(path, WriterOptions{Log: "other.example/log"}); err == nil || !strings.Contains(err.Error(), "checkpoint is of the log") {
		t.Fatalf("OpenWriter under another name, with a checkpoint: %v", err)
	}
}

func TestWriterLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "collector.ndjson")
	w := openTestWriter(t, path, nil)
	_, _, err := OpenWriter(path, WriterOptions{Log: testLog})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second OpenWriter: %v, want ErrLocked", err)
	}
	if want := fmt.Sprintf("pid %d", os.Getpid()); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "locked by another writer") {
		t.Errorf("lock error %q does not name the holder (%s)", err, want)
	}
	t.Log(err)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w = openTestWriter(t, path, nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestWriterConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "collector.ndjson")
	w := openTestWriter(t, path, nil)
	const goroutines, each = 4, 3000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				r := genRecord(g*each + i)
				if _, err := w.Append(&r); err != nil {
					t.Error(err)
					return
				}
				if i%1000 == 999 {
					if g == 0 {
						if _, err := w.Checkpoint(); err != nil {
							t.Error(err)
						}
					} else if err := w.Sync(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := ReadLog(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Records != goroutines*each {
		t.Fatalf("%d records, want %d", rep.Records, goroutines*each)
	}
}

// TestWriterRandomRecords writes records with every field drawn at random
// (corner numbers and times, strings that need escapes, unknown members
// in any form, envelopes) and reads them back.
func TestWriterRandomRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	path := filepath.Join(t.TempDir(), "collector.ndjson")
	w := openTestWriter(t, path, nil)
	var want [][]byte
	rejected := 0
	for i := range 20_000 {
		r := randomRecord(rng)
		if i%2 == 0 {
			r = cornerRecord(rng)
		}
		if _, err := w.Append(&r); err != nil {
			var fe *auditfmt.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("record %+v: %v", r, err)
			}
			rejected++
			continue
		}
		want = append(want, recordBytes(t, &r))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := ReadLog(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range readRecords(t, path) {
		r.Envelope = ""
		if got := recordBytes(t, &r); !bytes.Equal(got, want[i]) {
			t.Fatalf("record %d reads back as %s, want %s", i, got, want[i])
		}
	}
	t.Logf("%d records written and verified, %d rejected", rep.Records, rejected)
}
