package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReplayVerdictStatuses: a replay that did not keep its schedule
// exits 3 (inconclusive), and a plan this machine cannot drive is refused
// before the first connect, with exit status 2 and the --devices that
// fits, which then replays.
func TestReplayVerdictStatuses(t *testing.T) {
	dir := t.TempDir()
	fleet := filepath.Join(dir, "fleet.ndjson")
	if code, _, stderr := runArgs(t, "simulate", "-q", "--devices", "40", "--outage", "7s", "--policy", "fixed", "--horizon", "15s", "-o", fleet); code != 0 {
		t.Fatalf("simulate: exit %d: %s", code, stderr)
	}
	code, out, stderr := runArgs(t, "replay", "-q", "--speed", "10", "--connack-slo", "1m", "--max-lateness", "1ns", fleet)
	if code != 3 || !regexp.MustCompile(`(?m)^result: +inconclusive: the replay fell behind`).Match(out) {
		t.Errorf("a bound no replay keeps: exit %d, want 3: %s\n%s", code, stderr, out)
	}

	var lim unix.Rlimit
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil || unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) != nil {
		t.Skip("no /proc/self/fd or RLIMIT_NOFILE here")
	}
	low := lim
	low.Cur = uint64(len(fds) + 300) // the replay's reserve, and room for a few of the 40 devices
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	code, _, stderr = runArgs(t, "replay", "-q", "--speed", "10", fleet)
	m := regexp.MustCompile(`this machine cannot drive 40 devices: they need \d+ descriptors .*; replay at most (\d+) of them with --devices (\d+)`).FindStringSubmatch(stderr)
	if code != 2 || m == nil || m[1] != m[2] {
		t.Fatalf("40 devices in %d descriptors: exit %d, want 2 and the --devices that fits: %s", low.Cur, code, stderr)
	}
	code, out, stderr = runArgs(t, "replay", "-q", "--speed", "10", "--connack-slo", "1m", "--max-lateness", "1m", "--devices", m[1], fleet)
	if code != 0 || !regexp.MustCompile(`(?m)^devices: +`+m[1]+`$`).Match(out) {
		t.Errorf("--devices %s: exit %d: %s\n%s", m[1], code, stderr, out)
	}
}
