package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stormauditBinary returns a command that runs this test binary as
// stormaudit, a process of its own (see TestMain).
func stormauditBinary(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "stormaudit")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, args...)
	cmd.Dir = dir
	return cmd
}

// leftovers lists the dataset dir/ds and what an ingest into it left
// beside it (its stage and the stage's lock), in name order.
func leftovers(t *testing.T, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".ds.ingest-") || e.Name() == "ds" {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestIngestInterrupted: an ingest stopped by SIGTERM (CI cancelling a
// job) or SIGINT while it reads a pipe leaves no dataset and nothing
// beside it; one killed with SIGKILL leaves its stage, which the next
// ingest into the same output removes, and says so.
func TestIngestInterrupted(t *testing.T) {
	line := `{"client_id":"dev-1","attempt":0,"backoff_delay_s":0.5,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:30.%06d+00:00"}` + "\n"
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "p.ndjson")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := stormauditBinary(t, dir, "ingest", "-o", "ds", "p.ndjson")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the ingest to open it
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			for i := range 20000 {
				fmt.Fprintf(w, line, i)
			}
			time.Sleep(300 * time.Millisecond) // it has read them and waits for more
			if len(leftovers(t, dir)) != 2 {
				t.Fatalf("while ingesting: %v, want its stage and lock", leftovers(t, dir))
			}
			cmd.Process.Signal(sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the ingest did not stop within 10 s of %v", sig)
			}
			if err == nil {
				t.Fatalf("exit 0 after %v", sig)
			}
			if want := 128 + int(sig); sig != syscall.SIGKILL {
				// the shell's convention: 130 for Ctrl-C, 143 for SIGTERM
				if got := cmd.ProcessState.ExitCode(); got != want || !strings.Contains(stderr.String(), "interrupted") ||
					strings.Contains(stderr.String(), "context canceled") {
					t.Errorf("after %v: exit %d, want %d; stderr %q", sig, got, want, stderr.String())
				}
			}
			left := leftovers(t, dir)
			if sig != syscall.SIGKILL {
				if len(left) > 0 {
					t.Errorf("after %v: %v left (stderr: %s)", sig, left, stderr.String())
				}
				return
			}
			if len(left) != 2 || !strings.HasPrefix(left[0], ".ds.ingest-") {
				t.Fatalf("after SIGKILL: %v, want the stage and its lock", left)
			}
			if err := os.WriteFile(filepath.Join(dir, "f.ndjson"), []byte(fmt.Sprintf(line, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, errText := runArgs(t, "ingest", "-q", "-o", filepath.Join(dir, "ds"), filepath.Join(dir, "f.ndjson"))
			if code != 0 || !strings.Contains(errText, "removed "+filepath.Join(dir, left[0])+", the leftovers of an ingest") {
				t.Errorf("the next ingest: exit %d, stderr %q", code, errText)
			}
			if got := leftovers(t, dir); len(got) != 1 || got[0] != "ds" {
				t.Errorf("after the next ingest: %v, want the dataset alone", got)
			}
		})
	}
}

// TestIngestStrictWritesNothing: under --strict the first rejected line
// stops the ingest, exit 2, and no dataset is written (a regression: a
// complete dataset was left behind).
func TestIngestStrictWritesNothing(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bad.ndjson")
	os.WriteFile(in, []byte("{\"client_id\":\"a\"}\n"), 0o644)
	code, _, stderr := runArgs(t, "ingest", "--strict", "-o", filepath.Join(dir, "ds"), in)
	if code != 2 || !strings.Contains(stderr, "--strict: "+in+":1: ") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if left := leftovers(t, dir); len(left) > 0 {
		t.Errorf("%v left behind", left)
	}
}

// TestSimulateInterrupted: simulate -o FILE stopped by SIGTERM while it
// writes leaves no FILE and no temporary file beside it (it used to leave
// a truncated log of hundreds of megabytes).
func TestSimulateInterrupted(t *testing.T) {
	dir := t.TempDir()
	cmd := stormauditBinary(t, dir, "simulate", "--devices", "1000000", "--outage", "1m", "-q", "-o", "big.ndjson")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// wait until it writes: its temporary file beside big.ndjson grows
	deadline := time.Now().Add(60 * time.Second)
	for {
		tmp, _ := filepath.Glob(filepath.Join(dir, ".big.ndjson.tmp-*"))
		if len(tmp) == 1 {
			if st, err := os.Stat(tmp[0]); err == nil && st.Size() > 1<<20 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("simulate wrote no temporary file within 60 s; stderr %q", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("simulate did not stop within 30 s of SIGTERM")
	}
	if got := cmd.ProcessState.ExitCode(); got != 143 {
		t.Errorf("exit %d, want 143; stderr %q", got, stderr.String())
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("left behind: %v", names)
	}
}
