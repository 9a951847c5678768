package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLostFieldsEndToEnd: outbox_dropped and inbound_expired, from NDJSON
// and from CSV, through ingest, verify and the Arrow export, line by line
// as the log wrote them (absent stays absent), and a value the schema
// does not allow is quarantined, naming the field.
func TestLostFieldsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	const head = `"attempt":%d,"backoff_delay_s":0.5,"outcome":"%s","clean_session":false,"recorded_at":"2026-11-30T14:17:%02d+00:00"`
	lines := []string{
		`{"client_id":"dev-1",` + fmt.Sprintf(head, 0, "backoff_wait", 30) + `,"outbox_depth":100,"outbox_dropped":0}`,
		`{"client_id":"dev-1",` + fmt.Sprintf(head, 1, "attempt_failed", 31) + `,"outbox_depth":100,"outbox_dropped":37}`,
		`{"client_id":"dev-1",` + fmt.Sprintf(head, 0, "connected", 40) + `,"inbound_redelivered":12,"inbound_expired":5,"outbox_dropped":9007199254740992}`,
		`{"client_id":"dev-2",` + fmt.Sprintf(head, 0, "connected", 41) + `}`,
		`{"client_id":"dev-2",` + fmt.Sprintf(head, 0, "connected", 42) + `,"inbound_expired":0}`,
	}
	nd := filepath.Join(dir, "log.ndjson")
	if err := os.WriteFile(nd, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := countsByLine(t, nd, "outbox_dropped", "inbound_expired")
	// the same records as CSV: line k+1 of it is line k of the log
	csvPath := filepath.Join(dir, "log.csv")
	csv := "client_id,attempt,backoff_delay_s,outcome,clean_session,recorded_at,outbox_dropped,inbound_redelivered,inbound_expired\n" +
		"dev-1,0,0.5,backoff_wait,false,2026-11-30T14:17:30+00:00,0,,\n" +
		"dev-1,1,0.5,attempt_failed,false,2026-11-30T14:17:31+00:00,37,,\n" +
		"dev-1,0,0.5,connected,false,2026-11-30T14:17:40+00:00,9007199254740992,12,5\n" +
		"dev-2,0,0.5,connected,false,2026-11-30T14:17:41+00:00,,,\n" +
		"dev-2,0,0.5,connected,false,2026-11-30T14:17:42+00:00,,,0\n"
	if err := os.WriteFile(csvPath, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{nd, csvPath} {
		ds, arrowOut := filepath.Join(dir, filepath.Base(in)+".ds"), filepath.Join(dir, filepath.Base(in)+".arrow")
		ingestVerifyExport(t, in, ds, arrowOut)
		got := arrowCounts(t, arrowOut, "outbox_dropped", "inbound_expired")
		for line, w := range want {
			if strings.HasSuffix(in, ".csv") {
				line++ // the header
			}
			if got[line] != w {
				t.Errorf("%s, line %d: outbox_dropped, inbound_expired %v, the log %v", filepath.Base(in), line, got[line], w)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d rows exported, %d lines", filepath.Base(in), len(got), len(want))
		}
	}

	bad := filepath.Join(dir, "bad.ndjson")
	if err := os.WriteFile(bad, []byte(lines[0]+"\n"+strings.Replace(lines[2], `"inbound_expired":5`, `"inbound_expired":13`, 1)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runArgs(t, "--no-config", "ingest", "-o", filepath.Join(dir, "bad.ds"), bad)
	if code != 0 || !strings.Contains(stderr, "1 rejected") {
		t.Errorf("ingest of a log with inbound_expired beyond inbound_redelivered: exit %d, want 0 with 1 rejected:\n%s", code, stderr)
	}
}
