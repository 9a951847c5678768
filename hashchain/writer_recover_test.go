package hashchain

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tornLog writes a log of six records from three devices whose checkpoint
// covers the first five, and returns the log's bytes, the checkpoint file
// and the length of the last line.
func tornLog(t *testing.T) (log, checkpoint []byte, last int) {
	t.Helper()
	signer, _ := testKeys(t)
	path := filepath.Join(t.TempDir(), "collector.ndjson")
	w := openTestWriter(t, path, signer)
	for i := range 6 {
		if i == 5 {
			if _, err := w.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
		r := genFleetRecord(i, 3)
		if _, err := w.Append(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	log, _ = os.ReadFile(path)
	checkpoint, _ = os.ReadFile(path + ".checkpoint")
	return log, checkpoint, len(log) - bytes.LastIndexByte(log[:len(log)-1], '\n') - 1
}

// writeLog writes a log and its checkpoint file into a new directory, under
// the name the rows were hashed with.
func writeLog(t *testing.T, log, checkpoint []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "collector.ndjson")
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	if checkpoint != nil {
		if err := os.WriteFile(path+".checkpoint", checkpoint, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestWriterTornTail(t *testing.T) {
	log, checkpoint, last := tornLog(t)
	signer, verifiers := testKeys(t)
	complete := len(log) - last // the end of the fifth record
	for cut := 0; cut <= last; cut++ {
		path := writeLog(t, log[:len(log)-cut], checkpoint)
		w, rec, err := OpenWriter(path, WriterOptions{Log: testLog, Signer: signer})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		switch {
		case cut == 0 || cut == last:
			if rec != nil {
				t.Errorf("cut %d: recovery %v, want none", cut, rec)
			}
		case rec == nil:
			t.Fatalf("cut %d of %d: no recovery reported", cut, last)
		case rec.Path != path || rec.Line != 6 || rec.Offset != int64(complete) || rec.Cut != int64(last-cut) || !strings.Contains(rec.Reason, "no newline"):
			t.Fatalf("cut %d: recovery %+v; want line 6, offset %d, %d bytes cut", cut, rec, complete, last-cut)
		}
		if st, _ := os.Stat(path); st.Size() != int64(complete) && cut != 0 {
			t.Fatalf("cut %d: the log has %d bytes after recovery, want %d", cut, st.Size(), complete)
		}
		// Writing the lost record again restores the log byte for byte.
		if cut != 0 {
			r := genFleetRecord(5, 3)
			if pos, err := w.Append(&r); err != nil || pos.Seq != 1 || pos.Index != 5 {
				t.Fatalf("cut %d: append after recovery: %+v, %v", cut, pos, err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if rep, err := ReadLog(path, verifiers); err != nil || rep.Records != 6 || rep.Unsealed != 1 {
			t.Fatalf("cut %d: ReadLog after recovery: %+v, %v", cut, rep, err)
		}
		if got, _ := os.ReadFile(path); !bytes.Equal(got, log) {
			t.Fatalf("cut %d: the log differs from the original after rewriting the lost record", cut)
		}
	}
}

func TestWriterRecoverTails(t *testing.T) {
	log, checkpoint, last := tornLog(t)
	complete := log[:len(log)-last]
	for _, tt := range []struct {
		name, tail, reason string
	}{
		{"zeros", strings.Repeat("\x00", 8192), "no newline"},
		{"partial line then zeros", string(log[len(complete):len(log)-100]) + strings.Repeat("\x00", 100), "no newline"},
		{"a whole line that is not a record", "garbage\n", "not a record"},
		{"a blank line", "\n", "not a record"},
		{"a record without a chain", `{"client_id":"d","attempt":0,"backoff_delay_s":0.0,"outcome":"connected","clean_session":true,"recorded_at":"2026-11-30T14:17:34+00:00"}` + "\n", "chain envelope"},
		{"a line too long", strings.Repeat("x", maxLogLine+10) + "\n", "longer than"},
		{"a line too long without newline", strings.Repeat("x", 3*maxLogLine), "longer than"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeLog(t, append(bytes.Clone(complete), tt.tail...), checkpoint)
			w, rec, err := OpenWriter(path, WriterOptions{Log: testLog})
			if err != nil {
				t.Fatal(err)
			}
			if rec == nil || rec.Line != 6 || rec.Cut != int64(len(tt.tail)) || !strings.Contains(rec.Reason, tt.reason) {
				t.Fatalf("recovery %+v, want line 6, %d bytes, %q", rec, len(tt.tail), tt.reason)
			}
			t.Log(rec)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if rep, err := ReadLog(path, nil); err != nil || rep.Records != 5 {
				t.Fatalf("ReadLog: %+v, %v", rep, err)
			}
		})
	}
}

func TestWriterRefusesDamage(t *testing.T) {
	log, checkpoint, last := tornLog(t)
	signer, _ := testKeys(t)
	lines := bytes.SplitAfter(log, []byte("\n"))
	// A checkpoint over all six records: then the sixth may not be torn.
	full := writeLog(t, log, checkpoint)
	w, _, err := OpenWriter(full, WriterOptions{Log: testLog, Signer: signer})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	sealed, _ := os.ReadFile(full + ".checkpoint")

	for _, tt := range []struct {
		name       string
		log, cp    []byte
		line       int64
		want       string
		checkpoint bool // the error is about the checkpoint file
	}{
		{"torn record under the checkpoint", log[:len(log)-last/2], sealed, 6, "its checkpoint covers 6", false},
		{"damage before the last line", bytes.Replace(log, []byte(`"attempt":1`), []byte(`"attempt":2`), 1), checkpoint, 2, "link: the record does not match its chain link", false},
		{"a bad line before the last", bytes.Join([][]byte{lines[0], []byte("garbage\n"), bytes.Join(lines[1:], nil)}, nil), checkpoint, 2, "not a record", false},
		{"missing record", bytes.Join(append(lines[:2:2], lines[3:]...), nil), checkpoint, 0, "seq: expected", false},
		{"bad checkpoint", log, []byte("garbage\n"), 0, "neither a checkpoint nor a signed note", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeLog(t, tt.log, tt.cp)
			_, rec, err := OpenWriter(path, WriterOptions{Log: testLog, Signer: signer})
			var le *LogError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tt.want) || (tt.line != 0 && le.Line != tt.line) || rec != nil {
				t.Fatalf("OpenWriter: %v, %v; want a *LogError at line %d saying %q", rec, err, tt.line, tt.want)
			}
			t.Log(err)
			if got, _ := os.ReadFile(path); !bytes.Equal(got, tt.log) {
				t.Fatal("OpenWriter changed a log it refused")
			}
			// The lock is released: the next open fails the same way, not
			// on the lock.
			if _, _, err := OpenWriter(path, WriterOptions{Log: testLog}); errors.Is(err, ErrLocked) {
				t.Fatal(err)
			}
		})
	}
}

func TestWriterRemovesUnfinishedCheckpoint(t *testing.T) {
	log, checkpoint, _ := tornLog(t)
	path := writeLog(t, log, checkpoint)
	if err := os.WriteFile(path+".checkpoint.tmp", []byte("half a checkp"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := openTestWriter(t, path, nil)
	if _, err := os.Stat(path + ".checkpoint.tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unfinished checkpoint is still there: %v", err)
	}
	w.Close()
}

func TestWriterRefusesMissingLog(t *testing.T) {
	_, checkpoint, _ := tornLog(t)
	path := filepath.Join(t.TempDir(), "collector.ndjson")
	if err := os.WriteFile(path+".checkpoint", checkpoint, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := OpenWriter(path, WriterOptions{Log: testLog})
	if err == nil || !strings.Contains(err.Error(), "the log holds 0 records, its checkpoint covers 5") {
		t.Fatalf("OpenWriter of a log that is gone: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenWriter created the log it refused: %v", err)
	}
}
