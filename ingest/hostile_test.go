package ingest

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const okLine = `{"client_id":"dev-1","attempt":0,"backoff_delay_s":0.5,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:30+00:00"}` + "\n"

// TestIngestBOM: a UTF-8 byte order mark at the start of an NDJSON file
// is not part of its first record (a regression: the record was rejected).
func TestIngestBOM(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bom.ndjson")
	os.WriteFile(in, []byte("\xef\xbb\xbf"+okLine+okLine[:len(okLine)-1]+"\n"), 0o644)
	m, err := Run(context.Background(), filepath.Join(dir, "ds"), []Source{{Name: in}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Totals.Accepted != 1 || m.Totals.Duplicates != 1 || m.Totals.Rejected != 0 {
		t.Errorf("totals %+v, want 1 accepted and its duplicate", m.Totals)
	}
}

// TestIngestMaxRejects: a gzip of newlines (every line a reject) stops
// at --max-rejects with the counts, and writes nothing (a regression: 18.7
// MB of it wrote 4 GB of rejects.ndjson).
func TestIngestMaxRejects(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(bytes.Repeat([]byte("\n"), 5_000_000))
	zw.Close()
	in := filepath.Join(dir, "newlines.gz")
	os.WriteFile(in, buf.Bytes(), 0o644)
	out := filepath.Join(dir, "ds")
	_, err := Run(context.Background(), out, []Source{{Name: in}}, Options{MaxRejects: 1000})
	var tm *TooManyRejectsError
	if !errors.As(err, &tm) || tm.Rejected <= 1000 || tm.Rejected > 1000+batchLines || tm.Max != 1000 {
		t.Fatalf("err %v, want too many rejects just past 1000", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in %s, want the input alone", len(ents), dir)
	}
}

// TestIngestDatasetIdentity: every dataset gets a random id, and the
// default log name carries it, so two datasets of one directory name
// signed by one key have different logs (a regression: the log was
// "stormaudit/" and the directory's name).
func TestIngestDatasetIdentity(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "a.ndjson")
	os.WriteFile(in, []byte(okLine), 0o644)
	var logs, ids []string
	for _, parent := range []string{"x", "y"} {
		m, err := Run(context.Background(), filepath.Join(dir, parent, "incident"), []Source{{Name: in}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.DatasetID) != 32 || !strings.HasPrefix(m.Log, "stormaudit/incident/") || !strings.HasSuffix(m.Log, "/"+m.DatasetID) {
			t.Errorf("dataset id %q, log %q", m.DatasetID, m.Log)
		}
		logs, ids = append(logs, m.Log), append(ids, m.DatasetID)
	}
	if logs[0] == logs[1] || ids[0] == ids[1] {
		t.Errorf("two datasets share a log or id: %v %v", logs, ids)
	}
}

// TestIngestOutputAsItWas: a failed ingest into an existing empty
// directory leaves it empty, and into a new one creates nothing.
func TestIngestOutputAsItWas(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	for _, out := range []string{empty, filepath.Join(dir, "new")} {
		_, err := Run(context.Background(), out, []Source{{Name: filepath.Join(dir, "missing.ndjson")}}, Options{})
		if err == nil {
			t.Fatal("a missing input was ingested")
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "empty" {
		t.Errorf("%v left in %s, want the empty directory alone", ents, dir)
	}
	if inner, _ := os.ReadDir(empty); len(inner) != 0 {
		t.Errorf("%d entries in the empty output", len(inner))
	}
}

// TestIngestFIFOWithoutWriter: an ingest waiting for a FIFO's writer stops
// when it is cancelled, the first time (a regression: it hung and ignored
// the first Ctrl-C).
func TestIngestFIFOWithoutWriter(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "p.ndjson")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, filepath.Join(dir, "ds"), []Source{{Name: fifo}}, Options{})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no writer opened the FIFO") {
			t.Errorf("err %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the ingest still waits for the FIFO's writer 5 s after it was cancelled")
	}
}

// TestIngestIntoSymlink: -o LINK, a symlink to a directory, builds the
// dataset in the directory and leaves the link a link (issue 25: the
// rename replaced the link).
func TestIngestIntoSymlink(t *testing.T) {
	dir := t.TempDir()
	real, link := filepath.Join(dir, "real"), filepath.Join(dir, "link")
	os.Mkdir(real, 0o755)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.ndjson")
	os.WriteFile(in, []byte(`{"client_id":"d","attempt":0,"backoff_delay_s":0,"outcome":"connected","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}`+"\n"), 0o644)
	if _, err := Run(context.Background(), link, []Source{{Name: in}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(real, "manifest.json")); err != nil {
		t.Errorf("no dataset in the directory the link names: %v", err)
	}
}
