package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/hashchain"
)

// ingestLines ingests lines (as one input named name) into a new dataset.
func ingestLines(t *testing.T, dir string, signer note.Signer, inputs ...[]string) *dataset.Manifest {
	t.Helper()
	var srcs []ingest.Source
	for i, lines := range inputs {
		srcs = append(srcs, ingest.Source{Name: testkit.WriteInput(t, string(rune('a'+i))+".ndjson", lines)})
	}
	m, err := ingest.Run(context.Background(), dir, srcs, ingest.Options{Log: "stormaudit.test/incident", Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustVerify(t *testing.T, dir string, opts Options) *Report {
	t.Helper()
	rep, err := Dataset(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestVerifyIntact(t *testing.T) {
	signer, verifiers := testkit.Keys(t, "collector-1")
	dir := filepath.Join(t.TempDir(), "ds")
	m := ingestLines(t, dir, signer, testkit.GenLines(300, 7, 5))
	rep := mustVerify(t, dir, Options{Verifiers: verifiers})
	if rep.Problem != nil {
		t.Fatalf("intact dataset: %s", rep.Problem)
	}
	if rep.Records != m.Rows || rep.Origins != 7 || rep.Checkpoint.Size != m.Rows || rep.Unsealed != 0 {
		t.Errorf("report = %+v", rep)
	}
	if strings.Join(rep.Verified, ",") != "collector-1" || !rep.Signed {
		t.Errorf("signers: verified %v signed %v", rep.Verified, rep.Signed)
	}
	// Another key's signature does not count.
	_, other := testkit.Keys(t, "someone-else")
	if rep := mustVerify(t, dir, Options{Verifiers: other}); rep.Problem == nil {
		t.Errorf("verified with the wrong key")
	}
}

// rewrite reads the dataset's only file, lets edit change the rows, and
// writes them back in place.
func rewrite(t *testing.T, dir string, edit func(recs []auditfmt.Record, pos []hashchain.Pos, sources []string) ([]auditfmt.Record, []hashchain.Pos, []string)) {
	t.Helper()
	m, err := dataset.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, m.Files[0].Name)
	fr, err := dataset.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []auditfmt.Record
	var pos []hashchain.Pos
	rb, pb := make([]auditfmt.Record, 64), make([]hashchain.Pos, 64)
	for {
		n, err := fr.ReadChain(rb, pb)
		recs, pos = append(recs, rb[:n]...), append(pos, pb[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	sources := fr.Sources()
	fr.Close()
	recs, pos, sources = edit(recs, pos, sources)
	os.Remove(path)
	fw, err := dataset.CreateFile(path, sources)
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.WriteChained(recs, pos); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyNamesEditedRowInEveryColumn(t *testing.T) {
	lines := []string{
		`{"client_id": "dev-1", "attempt": 0, "backoff_delay_s": 0.5, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:30.1+00:00"}`,
		`{"message": "m", "audit": {"client_id": "dev-1", "attempt": 1, "backoff_delay_s": 0.5, "outcome": "attempt_failed", "clean_session": true, "recorded_at": "2026-11-30T14:17:31.2+00:00", "schema": 1, "host_id": "gw-1", "stage": "session", "attempt_id": "a1", "record_id": "r1", "device_seq": 7, "failure_class": "auth", "reason_code": 5, "ceiling_s": 1.0, "session_present": false, "outbox_depth": 3, "outbox_flushed": 0, "inbound_redelivered": 40, "inbound_duplicates": 1, "outbox_dropped": 37, "inbound_expired": 2, "fw": "1.2"}}`,
		`{"client_id": "dev-1", "attempt": 0, "backoff_delay_s": 0.0, "outcome": "connected", "clean_session": false, "recorded_at": "2026-11-30T14:17:35.3+00:00"}`,
		`{"client_id": "dev-2", "attempt": 0, "backoff_delay_s": 0.25, "outcome": "connected", "clean_session": false, "recorded_at": "2026-11-30T14:17:33+00:00"}`,
	}
	const row = 1 // the record with every field
	edits := map[string]func(r *auditfmt.Record, p *hashchain.Pos, sources []string) []string{
		"client_id":           func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.ClientID = "dev-10"; return s },
		"recorded_at":         func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.RecordedAt += 1000; return s },
		"recorded_at_ns":      func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.RecordedAt++; return s },
		"recorded_offset_min": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.OffsetMin = 60; return s },
		"attempt":             func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.Attempt = 2; return s },
		"backoff_delay_s":     func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.BackoffDelayS = 0.25; return s },
		"outcome": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string {
			r.Outcome = auditfmt.Connected
			return s
		},
		"clean_session": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.CleanSession = false; return s },
		"schema": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string {
			r.Has &^= auditfmt.HasSchema
			return s
		},
		"host_id": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.HostID = "gw-2"; return s },
		"stage": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string {
			r.Stage = auditfmt.StageLink
			return s
		},
		"attempt_id": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.AttemptID = "a2"; return s },
		"record_id":  func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.RecordID = ""; return s },
		"device_seq": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.DeviceSeq = 8; return s },
		"failure_class": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string {
			r.FailureClass = auditfmt.FailTransient
			return s
		},
		"reason_code":     func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.ReasonCode = 0; return s },
		"ceiling_s":       func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.CeilingS = 2; return s },
		"session_present": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.SessionPresent = true; return s },
		"outbox_depth":    func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.OutboxDepth = 4; return s },
		"outbox_flushed": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string {
			r.Has &^= auditfmt.HasOutboxFlushed
			return s
		},
		"inbound_redelivered": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.InboundRedelivered = 41; return s },
		"inbound_duplicates": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string {
			r.Has &^= auditfmt.HasInboundDuplicates
			return s
		},
		"outbox_dropped": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.OutboxDropped = 36; return s },
		"inbound_expired": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string {
			r.Has &^= auditfmt.HasInboundExpired
			return s
		},
		"extra": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.Extra = `{"fw":"1.3"}`; return s },
		"envelope": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string {
			r.Envelope = `{"message":"x"}`
			return s
		},
		"source": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string {
			r.Source = uint32(len(s))
			return append(s, "forged.ndjson")
		},
		"line":   func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { r.Line = 99; return s },
		"origin": func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { p.Origin += "x"; return s },
		"seq":    func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { p.Seq = 5; return s },
		"link":   func(r *auditfmt.Record, p *hashchain.Pos, s []string) []string { p.Link[0] ^= 1; return s },
	}
	for _, col := range dataset.Columns() {
		edit, ok := edits[col]
		if !ok {
			t.Errorf("no edit for column %s", col)
			continue
		}
		t.Run(col, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			ingestLines(t, dir, nil, lines)
			rewrite(t, dir, func(recs []auditfmt.Record, pos []hashchain.Pos, s []string) ([]auditfmt.Record, []hashchain.Pos, []string) {
				return recs, pos, edit(&recs[row], &pos[row], s)
			})
			rep := mustVerify(t, dir, Options{})
			if rep.Problem == nil {
				t.Fatalf("editing %s went unnoticed", col)
			}
			if p := rep.Problem; p.File != "part-00000.parquet" || p.Row != row {
				t.Errorf("problem %q, want it to name part-00000.parquet row %d", p, row)
			}
		})
	}
}

// TestVerifyDatasetWrittenBeforeOutboxColumns verifies a dataset that
// stormaudit wrote before outbox_depth and outbox_flushed were fields
// (testdata/datasets/README.md): its files lack their columns and its
// rows hold them in extra, where R had them then.
func TestVerifyDatasetWrittenBeforeOutboxColumns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "before-outbox")
	if err := os.CopyFS(dir, os.DirFS("../testdata/datasets/before-outbox")); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, dir, Options{})
	if rep.Problem != nil {
		t.Fatalf("a dataset written before the outbox columns: %s", rep.Problem)
	}
	if rep.Records != 8 || rep.Origins != 2 {
		t.Errorf("report = %+v", rep)
	}
}

func TestVerifyCatchesStructuralTampering(t *testing.T) {
	lines := testkit.GenLines(40, 3, 8)
	cases := map[string]func(recs []auditfmt.Record, pos []hashchain.Pos) ([]auditfmt.Record, []hashchain.Pos){
		"delete": func(r []auditfmt.Record, p []hashchain.Pos) ([]auditfmt.Record, []hashchain.Pos) {
			return append(r[:5:5], r[6:]...), append(p[:5:5], p[6:]...)
		},
		"duplicate": func(r []auditfmt.Record, p []hashchain.Pos) ([]auditfmt.Record, []hashchain.Pos) {
			return append(r[:6:6], r[5:]...), append(p[:6:6], p[5:]...)
		},
		"swap": func(r []auditfmt.Record, p []hashchain.Pos) ([]auditfmt.Record, []hashchain.Pos) {
			r[5], r[6] = r[6], r[5]
			p[5], p[6] = p[6], p[5]
			return r, p
		},
		"truncate": func(r []auditfmt.Record, p []hashchain.Pos) ([]auditfmt.Record, []hashchain.Pos) {
			return r[:len(r)-1], p[:len(p)-1]
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			ingestLines(t, dir, nil, lines)
			rewrite(t, dir, func(r []auditfmt.Record, p []hashchain.Pos, s []string) ([]auditfmt.Record, []hashchain.Pos, []string) {
				r, p = edit(r, p)
				return r, p, s
			})
			if rep := mustVerify(t, dir, Options{}); rep.Problem == nil {
				t.Fatalf("%s went unnoticed", name)
			} else {
				t.Logf("%s: %s", name, rep.Problem)
			}
		})
	}
}

func TestVerifyTruncateAndResignWithAnotherKey(t *testing.T) {
	signer, verifiers := testkit.Keys(t, "collector-1")
	dir := filepath.Join(t.TempDir(), "ds")
	ingestLines(t, dir, signer, testkit.GenLines(40, 3, 8))
	// The attacker drops the last row and signs a matching checkpoint with
	// a key of their own.
	rewrite(t, dir, func(r []auditfmt.Record, p []hashchain.Pos, s []string) ([]auditfmt.Record, []hashchain.Pos, []string) {
		return r[:len(r)-1], p[:len(p)-1], s
	})
	truncated := mustVerify(t, dir, Options{})
	evil, _ := testkit.Keys(t, "collector-1") // same name, other key
	cp := hashchain.Checkpoint{Origin: "stormaudit.test/incident", Size: truncated.Records, Root: truncated.Root}
	signed, err := hashchain.SignCheckpoint(cp, evil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, dataset.CheckpointName), signed, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := mustVerify(t, dir, Options{Verifiers: verifiers})
	if rep.Problem == nil || !strings.Contains(rep.Problem.What, "signature") {
		t.Fatalf("re-signed truncation: problem %v, want a signature failure", rep.Problem)
	}
}

func TestVerifySinceExtensionAndFork(t *testing.T) {
	base := testkit.GenLines(30, 3, 9)
	later := []string{`{"client_id": "dev-9999", "attempt": 0, "backoff_delay_s": 1.0, "outcome": "connected", "clean_session": false, "recorded_at": "2026-11-30T15:00:00+00:00"}`}
	fork := []string{`{"client_id": "dev-0000", "attempt": 0, "backoff_delay_s": 1.0, "outcome": "connected", "clean_session": false, "recorded_at": "2026-11-30T15:00:00+00:00"}`}
	root := t.TempDir()
	oldDir, newDir, forkDir := filepath.Join(root, "old"), filepath.Join(root, "new"), filepath.Join(root, "fork")
	// The same first input file, so that rows read from it are the same rows.
	a := testkit.WriteInput(t, "a.ndjson", base)
	ingestInto := func(dir string, extra []string) {
		srcs := []ingest.Source{{Name: a}}
		if extra != nil {
			srcs = append(srcs, ingest.Source{Name: testkit.WriteInput(t, "b.ndjson", extra)})
		}
		if _, err := ingest.Run(context.Background(), dir, srcs, ingest.Options{Log: "stormaudit.test/incident"}); err != nil {
			t.Fatal(err)
		}
	}
	ingestInto(oldDir, nil)
	ingestInto(newDir, later)
	ingestInto(forkDir, fork)
	old := mustVerify(t, oldDir, Options{}).Checkpoint
	if rep := mustVerify(t, newDir, Options{Since: old}); rep.Problem != nil {
		t.Errorf("extension: %s", rep.Problem)
	}
	rep := mustVerify(t, forkDir, Options{Since: old})
	if rep.Problem == nil || !strings.Contains(rep.Problem.What, "forked") {
		t.Errorf("fork: problem %v, want a fork", rep.Problem)
	}
	// And a log truncated below the old checkpoint.
	short := filepath.Join(root, "short")
	if _, err := ingest.Run(context.Background(), short, []ingest.Source{{Name: testkit.WriteInput(t, "a.ndjson", base[:10])}}, ingest.Options{Log: "stormaudit.test/incident"}); err != nil {
		t.Fatal(err)
	}
	if rep := mustVerify(t, short, Options{Since: old}); rep.Problem == nil {
		t.Errorf("truncated log verified against the old checkpoint")
	}
}

func TestProveAndCheckProof(t *testing.T) {
	signer, verifiers := testkit.Keys(t, "collector-1")
	dir := filepath.Join(t.TempDir(), "ds")
	ingestLines(t, dir, signer, testkit.GenLines(100, 5, 4))
	origin := "stormaudit.test/incident/dev-0002"
	p, err := Prove(dir, origin, 3)
	if err != nil {
		t.Fatal(err)
	}
	cp, signers, err := hashchain.CheckProof(p, verifiers)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Size != 100-countDups(t, dir) || strings.Join(signers, ",") != "collector-1" {
		t.Errorf("checkpoint %+v signers %v", cp, signers)
	}
	// Any change to the proof's content fails.
	bad := *p
	bad.Record = strings.Replace(p.Record, `"attempt":`, `"attempt":1`, 1)
	if _, _, err := hashchain.CheckProof(&bad, verifiers); err == nil {
		t.Errorf("a changed record passed")
	}
	for name, edit := range map[string]func(*hashchain.Proof){
		"line":      func(q *hashchain.Proof) { q.Line++ },
		"source":    func(q *hashchain.Proof) { q.Source = "other.ndjson" },
		"origin":    func(q *hashchain.Proof) { q.Origin = "stormaudit.test/incident/dev-0003" },
		"seq":       func(q *hashchain.Proof) { q.Seq++ },
		"index":     func(q *hashchain.Proof) { q.Index++ },
		"prev_link": func(q *hashchain.Proof) { q.PrevLink[0] ^= 1 },
		"link":      func(q *hashchain.Proof) { q.Link[0] ^= 1 },
		"inclusion": func(q *hashchain.Proof) {
			q.Inclusion = append([]tlog.Hash(nil), q.Inclusion...)
			q.Inclusion[0][0] ^= 1
		},
		"checkpoint": func(q *hashchain.Proof) {
			q.Checkpoint = strings.Replace(q.Checkpoint, "stormaudit.test/incident\n", "stormaudit.test/other\n", 1)
		},
		"tree_size": func(q *hashchain.Proof) { q.TreeSize-- },
		"format":    func(q *hashchain.Proof) { q.Format = "stormaudit-record-proof-v1" },
		"bytes":     func(q *hashchain.Proof) { q.Bytes = "A" + q.Bytes[1:] },
		"leaves":    func(q *hashchain.Proof) { q.Leaves++ },
		"tree_root": func(q *hashchain.Proof) { r := *q.TreeRoot; r[0] ^= 1; q.TreeRoot = &r },
	} {
		bad = *p
		edit(&bad)
		if _, _, err := hashchain.CheckProof(&bad, verifiers); err == nil {
			t.Errorf("a proof with its %s changed passed", name)
		}
	}
	// the proof file reads back strictly
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if q, err := hashchain.ParseProof(b); err != nil || q.Record != p.Record {
		t.Errorf("ParseProof of a proof: %v", err)
	}
	for _, text := range []string{string(b[:len(b)-1]) + `,"extra":1}`, string(b) + "{}", "[]"} {
		if _, err := hashchain.ParseProof([]byte(text)); err == nil {
			t.Errorf("ParseProof accepted %.60s...", text)
		}
	}
	if _, err := Prove(dir, origin, 99999); err == nil {
		t.Errorf("proved a record that is not there")
	}
}

// TestProveLongChains: in chains longer than a segment (64 records),
// every record's proof checks, whether it ends its segment, its chain or
// neither; a proof whose following records are dropped, reordered or
// changed does not.
func TestProveLongChains(t *testing.T) {
	signer, verifiers := testkit.Keys(t, "collector-1")
	dir := filepath.Join(t.TempDir(), "ds")
	ingestLines(t, dir, signer, testkit.GenLines(400, 3, 9))
	checked := 0
	for dev := range 3 {
		origin := fmt.Sprintf("stormaudit.test/incident/dev-%04d", dev)
		for _, seq := range []int64{0, 1, 62, 63, 64, 65, 126, 127, 128} {
			p, err := Prove(dir, origin, seq)
			if err != nil {
				continue // a chain shorter than seq
			}
			checked++
			if _, _, err := hashchain.CheckProof(p, verifiers); err != nil {
				t.Fatalf("%s seq %d: %v", origin, seq, err)
			}
			if want := 63 - seq%64; int64(len(p.Following)) > want {
				t.Errorf("%s seq %d: %d following records, more than the %d to its segment's end", origin, seq, len(p.Following), want)
			}
			if len(p.Following) < 2 {
				continue
			}
			for name, edit := range map[string]func(q *hashchain.Proof){
				"dropped": func(q *hashchain.Proof) { q.Following = q.Following[:len(q.Following)-1] },
				"reordered": func(q *hashchain.Proof) {
					q.Following = append([]string{q.Following[1], q.Following[0]}, q.Following[2:]...)
				},
				"changed": func(q *hashchain.Proof) { q.Following = append([]string{"A" + q.Following[0][1:]}, q.Following[1:]...) },
			} {
				bad := *p
				edit(&bad)
				if _, _, err := hashchain.CheckProof(&bad, verifiers); err == nil {
					t.Errorf("%s seq %d: a proof with its following records %s passed", origin, seq, name)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d proofs made: the chains are too short for the test", checked)
	}
}

func countDups(t *testing.T, dir string) int64 {
	m, err := dataset.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	return m.Totals.Duplicates
}

// A stored value no writer of ours produces (here a negative attempt) is
// tampering, reported as a problem at that row, not an I/O error.
func TestVerifyReportsUndecodableRowAsTampering(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	ingestLines(t, dir, nil, testkit.GenLines(20, 2, 3))
	rewrite(t, dir, func(r []auditfmt.Record, p []hashchain.Pos, s []string) ([]auditfmt.Record, []hashchain.Pos, []string) {
		r[5].Attempt = -1
		return r, p, s
	})
	rep := mustVerify(t, dir, Options{})
	if rep.Problem == nil || rep.Problem.Row != 5 || !strings.Contains(rep.Problem.What, "attempt") {
		t.Fatalf("problem = %v, want row 5, attempt", rep.Problem)
	}
}

// The accounting of every line read is evidence too: a quarantine file or
// a signed manifest changed after ingest fails verify.
func TestVerifyChecksTheAccounting(t *testing.T) {
	signer, verifiers := testkit.Keys(t, "collector-1")
	lines := append(testkit.GenLines(20, 2, 3), `{"client_id": "d", "attempt": -1}`, "not json")
	lines = append(lines, lines[0])
	fresh := func() string {
		dir := filepath.Join(t.TempDir(), "ds")
		ingestLines(t, dir, signer, lines)
		return dir
	}
	dir := fresh()
	rep := mustVerify(t, dir, Options{Verifiers: verifiers})
	if rep.Problem != nil || !rep.ManifestSigned || rep.Accounted != (dataset.Counts{Lines: 23, Accepted: 20, Rejected: 2, Duplicates: 1}) {
		t.Fatalf("intact: problem %v, signed %v, accounted %+v", rep.Problem, rep.ManifestSigned, rep.Accounted)
	}
	edits := map[string]func(dir string){
		"drop a reject": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, dataset.RejectsName))
			os.WriteFile(filepath.Join(dir, dataset.RejectsName), b[:strings.IndexByte(string(b), '\n')+1], 0o644)
		},
		"empty the duplicates": func(dir string) { os.WriteFile(filepath.Join(dir, dataset.DuplicatesName), nil, 0o644) },
		"lower a count": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, dataset.ManifestName))
			os.WriteFile(filepath.Join(dir, dataset.ManifestName), []byte(strings.Replace(string(b), `"rejected": 2`, `"rejected": 1`, 1)), 0o644)
		},
		"remove the signature": func(dir string) { os.Remove(filepath.Join(dir, dataset.ManifestSigName)) },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			dir := fresh()
			edit(dir)
			rep := mustVerify(t, dir, Options{Verifiers: verifiers})
			// a quarantine file that no longer matches its digest is named
			// itself; an edited count, the manifest; a missing signature, it
			ok := map[string]bool{dataset.ManifestName: true, dataset.ManifestSigName: true, dataset.RejectsName: true, dataset.DuplicatesName: true}
			if rep.Problem == nil || !ok[rep.Problem.File] {
				t.Fatalf("problem = %v, want a problem of the manifest, its signature or a quarantine file", rep.Problem)
			}
		})
	}
}

// TestVerifyEmptyDataset: a dataset of no rows (every line rejected)
// verifies, and an old checkpoint of no rows is extended by any later
// dataset of the log.
func TestVerifyEmptyDataset(t *testing.T) {
	signer, verifiers := testkit.Keys(t, "collector-1")
	dir := filepath.Join(t.TempDir(), "ds")
	ingestLines(t, dir, signer, []string{"not json"})
	rep := mustVerify(t, dir, Options{Verifiers: verifiers})
	if rep.Problem != nil || rep.Records != 0 || rep.Checkpoint.Size != 0 {
		t.Fatalf("an empty dataset: %+v, problem %v", rep, rep.Problem)
	}
	later := filepath.Join(t.TempDir(), "ds")
	ingestLines(t, later, signer, testkit.GenLines(50, 3, 2))
	if rep := mustVerify(t, later, Options{Verifiers: verifiers, Since: rep.Checkpoint}); rep.Problem != nil {
		t.Errorf("--since an empty checkpoint: %s", rep.Problem)
	}
}
