package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOutputKeepsWhatItIsNot: an output that is not a regular file (a
// named pipe here; /dev/null, a terminal) is written as it is, not
// replaced by a file renamed over it (which, as root, turned /dev/null
// into a file), a symbolic link still names the file it named, and a
// directory is refused.
func TestOutputKeepsWhatItIsNot(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "out.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	code, _, stderr := runArgs(t, "simulate", "-q", "--devices", "3", "--outage", "2s", "--horizon", "5s", "-o", fifo)
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the named pipe is now %v (%v)", fi.Mode(), err) // and its reader waits for a writer that will never come
	}
	var b []byte
	select {
	case b = <-got:
	case <-time.After(time.Minute): // a bound on a hang, not a timing
		t.Fatal("nothing came through the pipe")
	}
	if code != 0 || !bytes.Contains(b, []byte(`"client_id":"dev-0001"`)) {
		t.Errorf("simulate -o FIFO: exit %d, %d bytes through the pipe: %s", code, len(b), stderr)
	}

	target := filepath.Join(dir, "target.ndjson")
	link := filepath.Join(dir, "link.ndjson")
	if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runArgs(t, "simulate", "-q", "--devices", "3", "--outage", "2s", "--horizon", "5s", "-o", link); code != 0 {
		t.Fatalf("simulate -o LINK: exit %d: %s", code, stderr)
	}
	fi, err := os.Lstat(link)
	b, _ = os.ReadFile(target)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 || !strings.Contains(string(b), `"client_id":"dev-0001"`) {
		t.Errorf("the link is now %v (%v), and the file it named holds %.40q", fi.Mode(), err, b)
	}

	code, _, stderr = runArgs(t, "simulate", "-q", "--devices", "3", "-o", dir)
	if code != 2 || !strings.Contains(stderr, "is a directory: expected a file to write") {
		t.Errorf("simulate -o DIR: exit %d: %s", code, stderr)
	}
}
