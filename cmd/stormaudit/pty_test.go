//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns the two ends of a new pseudo-terminal of 100×30.
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	if err := unix.IoctlSetWinsize(int(pts.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 30, Col: 100}); err != nil {
		t.Fatal(err)
	}
	return ptm, pts
}

// TestNoTerminalQuery: under a terminal that never answers, no command,
// browse included, writes a query to it (no OSC 11, no cursor-position
// request), and so none waits for an answer. Bubble Tea's package init
// used to send both and wait termenv's 5 s for each run of any command.
func TestNoTerminalQuery(t *testing.T) {
	fleet, err := filepath.Abs(filepath.Join("..", "..", "tui", "testdata", "fleet.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--version"}, {"policy", "list"}, {"browse", "-q", fleet}} {
		ptm, pts := openPTY(t)
		cmd := stormauditBinary(t, t.TempDir(), args...)
		cmd.Env = append(os.Environ(), "TERM=xterm-256color")
		cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
		// a session of its own with the terminal as its controlling
		// terminal, in the foreground: as a shell starts it
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pts.Close()
		var out syncBuffer
		copied := make(chan struct{})
		go func() { io.Copy(&out, ptm); close(copied) }() // EIO once the child is gone
		if args[0] == "browse" {
			waitOutput(t, &out, "incident 1 of 1")
			ptm.Write([]byte("q"))
		}
		err := cmd.Wait()
		took := time.Since(start)
		<-copied
		if err != nil {
			t.Fatalf("%q: %v\n%q", args, err, out.Bytes())
		}
		if q := out.Bytes(); bytes.Contains(q, []byte("\x1b]11;")) || bytes.Contains(q, []byte("\x1b[6n")) {
			t.Errorf("%q queried the terminal: %q", args, q)
		}
		// the stall it guards against is termenv's 5 s; --version does
		// nothing else, and a second is a wide margin for a process start
		limit := 4 * time.Second
		if args[0] == "--version" {
			limit = time.Second
		}
		if args[0] != "browse" && took > limit {
			t.Errorf("%q took %v under a terminal that does not answer", args, took)
		}
		t.Logf("%q: %v", args, took)
	}
}

// syncBuffer is a bytes.Buffer one goroutine writes while another reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// Bytes returns a copy of what was written so far.
func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// waitOutput waits until out holds want.
func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if bytes.Contains(out.Bytes(), []byte(want)) {
			return
		}
	}
	t.Fatalf("the terminal never showed %q; it shows %q", want, out.Bytes())
}

// TestColorOnTerminal: on a terminal, check's text draws severities in
// colour unless NO_COLOR is set or --color never is given.
func TestColorOnTerminal(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "fixed.ndjson")
	if code := run(t.Context(), []string{"stormaudit", "simulate", "--devices", "3", "--outage", "12s", "--policy", "fixed", "-q", "-o", log}, nil, io.Discard, io.Discard); code != 0 {
		t.Fatalf("simulate: exit %d", code)
	}
	for _, tc := range []struct {
		env, flag string
		colour    bool
	}{{"", "", true}, {"NO_COLOR=1", "", false}, {"", "--color=never", false}, {"NO_COLOR=1", "--color=always", true}} {
		ptm, pts := openPTY(t)
		args := []string{"check", "-q", "--fail-on", "none", log}
		if tc.flag != "" {
			args = append([]string{tc.flag}, args...)
		}
		cmd := stormauditBinary(t, dir, args...)
		cmd.Env = append(os.Environ(), "TERM=xterm-256color", tc.env)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pts.Close()
		var out syncBuffer
		copied := make(chan struct{})
		go func() { io.Copy(&out, ptm); close(copied) }()
		err := cmd.Wait()
		<-copied
		if err != nil {
			t.Fatalf("%s %q: %v", tc.env, args, err)
		}
		if got := bytes.Contains(out.Bytes(), []byte("\x1b[31merror\x1b[0m")); got != tc.colour {
			t.Errorf("%s %q: colour %v, want %v:\n%q", tc.env, args, got, tc.colour, out.Bytes())
		}
	}
}
