package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// tmuxTerm is a real terminal for a smoke test: a tmux server of its own
// with one window of a fixed size running a command.
type tmuxTerm struct {
	t      *testing.T
	socket string
	exit   string // the file the command's exit status is written to
}

// newTmux starts command (a shell line) in a 100×30 tmux window with env
// added to the environment. Without tmux the test is skipped, except
// under CI, which installs it.
func newTmux(t *testing.T, env []string, command string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	dir := t.TempDir()
	tt := &tmuxTerm{t: t, socket: filepath.Join(dir, "tmux.sock"), exit: filepath.Join(dir, "exit")}
	line := command + "; echo $? > " + tt.exit + "; sleep 60"
	cmd := exec.Command("tmux", "-S", tt.socket, "-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "30", line)
	// as on a reviewer's terminal: termenv takes CI (set by .ci/run) to
	// mean a log, not a terminal, and draws no colour
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "CI=") || strings.HasPrefix(kv, "NO_COLOR=")
	}), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-S", tt.socket, "kill-server").Run() })
	return tt
}

// screen returns what the window shows; with escapes, its colours too.
func (tt *tmuxTerm) screen(escapes bool) string {
	args := []string{"-S", tt.socket, "capture-pane", "-p"}
	if escapes {
		args = append(args, "-e")
	}
	out, err := exec.Command("tmux", args...).Output()
	if err != nil {
		tt.t.Fatalf("tmux capture-pane: %v", err)
	}
	return string(out)
}

// waitFor waits until the window shows want.
func (tt *tmuxTerm) waitFor(want string) string {
	tt.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := tt.screen(false)
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("the terminal never showed %q; it shows:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// keys types the keys (tmux key names, or text) one at a time, as a
// person does; a text of several letters arrives in one read, as a held
// key's do.
func (tt *tmuxTerm) keys(keys ...string) {
	for _, k := range keys {
		if out, err := exec.Command("tmux", "-S", tt.socket, "send-keys", k).CombinedOutput(); err != nil {
			tt.t.Fatalf("tmux send-keys: %v: %s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// exited waits for the command to end and returns its exit status.
func (tt *tmuxTerm) exited() string {
	tt.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(tt.exit); err == nil && len(b) > 0 {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(50 * time.Millisecond)
	}
	tt.t.Fatalf("the command did not exit; the terminal shows:\n%s", tt.screen(false))
	return ""
}

// sgrColour matches an escape that sets a colour (not bold or reverse).
var sgrColour = regexp.MustCompile(`\x1b\[[0-9;]*\b(3[0-7]|9[0-7]|38;[25])[;m]`)

// TestBrowseInTmux runs stormaudit browse in a real terminal: a reviewer's
// path through the views, in colour and with NO_COLOR, and with the log on
// stdin and the keys from the terminal.
func TestBrowseInTmux(t *testing.T) {
	exe := stormauditBinary(t, ".").Path
	log, err := filepath.Abs(filepath.Join("..", "..", "tui", "testdata", "fleet.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("colour", func(t *testing.T) {
		tt := newTmux(t, []string{"TERM=xterm-256color"}, exe+" browse -q --policy fixed "+log)
		tt.waitFor("incident 1 of 1")
		if s := tt.screen(true); !sgrColour.MatchString(s) {
			t.Errorf("no colour on a colour terminal:\n%q", s)
		}
		tt.keys("4")
		tt.waitFor("finding 1 of")
		tt.keys("jj") // in one read: two key presses
		tt.waitFor("finding 3 of")
		tt.keys("g")
		tt.waitFor("finding 1 of")
		tt.keys("/", "auth", "Enter", "Enter")
		s := tt.waitFor("finding: warning auth-backoff")
		if !strings.Contains(s, "dev-0012") {
			t.Errorf("the finding's timeline is not dev-0012's:\n%s", s)
		}
		tt.keys("q")
		if code := tt.exited(); code != "0" {
			t.Errorf("exit status %s, want 0", code)
		}
	})
	t.Run("NO_COLOR", func(t *testing.T) {
		tt := newTmux(t, []string{"TERM=xterm-256color", "NO_COLOR=1"}, exe+" browse -q "+log)
		tt.waitFor("incident 1 of 1")
		tt.keys("2", "Enter")
		tt.waitFor("dev-0001 · 9 records")
		if s := tt.screen(true); sgrColour.MatchString(s) {
			t.Errorf("colour despite NO_COLOR:\n%q", s)
		}
		tt.keys("q")
		if code := tt.exited(); code != "0" {
			t.Errorf("exit status %s, want 0", code)
		}
	})
	t.Run("stdin", func(t *testing.T) {
		tt := newTmux(t, []string{"TERM=xterm-256color"}, "cat "+log+" | "+exe+" browse -q -")
		tt.waitFor("incident 1 of 1")
		tt.keys("2", "G")
		tt.waitFor("device 13 of 13")
		tt.keys("q")
		if code := tt.exited(); code != "0" {
			t.Errorf("exit status %s, want 0", code)
		}
	})
}

// TestExportArrowRefusesTerminal: Arrow IPC is binary, so export does not
// write it to a terminal (a real one, in tmux), and does to a pipe.
func TestExportArrowRefusesTerminal(t *testing.T) {
	exe := stormauditBinary(t, ".").Path
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	log, err := filepath.Abs(filepath.Join("..", "..", "tui", "testdata", "fleet.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runArgs(t, "ingest", "-q", "-o", ds, log); code != 0 {
		t.Fatalf("ingest: %s", stderr)
	}
	tt := newTmux(t, nil, exe+" export "+ds)
	if code := tt.exited(); code != "2" {
		t.Errorf("exit status %s, want 2", code)
	}
	if s := tt.screen(false); !strings.Contains(s, "export: --format arrow is binary: give -o FILE") {
		t.Errorf("the terminal shows:\n%s", s)
	}
	tt = newTmux(t, nil, exe+" export "+ds+" | wc -c > "+filepath.Join(dir, "n"))
	if code := tt.exited(); code != "0" {
		t.Errorf("to a pipe: exit status %s, want 0", code)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "n")); strings.TrimSpace(string(b)) == "0" {
		t.Errorf("to a pipe: nothing written")
	}
}
