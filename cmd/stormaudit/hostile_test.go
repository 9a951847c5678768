package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputsNeverClobberInputs: an output that is an input, by another
// spelling of its path or through a link, or that lies inside an input
// dataset, is refused before anything is written (a regression: check
// overwrote the audit log and export truncated the dataset's own file).
func TestOutputsNeverClobberInputs(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "f.ndjson")
	orig, err := os.ReadFile(filepath.Join("..", "..", "testdata", "incident.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(log, orig, 0o644)
	os.Symlink(log, filepath.Join(dir, "link.ndjson"))
	ds := filepath.Join(dir, "ds")
	if code, _, stderr := runArgs(t, "ingest", "-q", "-o", ds, log); code != 0 {
		t.Fatal(stderr)
	}
	part := filepath.Join(ds, "part-00000.parquet")
	partBytes, _ := os.ReadFile(part)
	for _, args := range [][]string{
		{"check", "--format", "json", "--output", log, log},
		{"check", "--format", "json", "--output", filepath.Join(dir, ".", "f.ndjson"), log},
		{"check", "--format", "json", "--output", filepath.Join(dir, "link.ndjson"), log},
		{"check", "--format", "text,sarif", "--output", "-," + filepath.Join(ds, "x.sarif"), ds},
		{"export", "-o", part, ds},
		{"export", "--format", "ndjson", "-o", filepath.Join(ds, "manifest.json"), ds},
	} {
		code, _, stderr := runArgs(t, args...)
		if code != 2 || !strings.Contains(stderr, "would overwrite the input") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if b, _ := os.ReadFile(log); string(b) != string(orig) {
		t.Error("the audit log was changed")
	}
	if b, _ := os.ReadFile(part); string(b) != string(partBytes) {
		t.Error("the dataset's Parquet file was changed")
	}
	if _, err := os.Stat(filepath.Join(ds, "x.sarif")); err == nil {
		t.Error("a SARIF file was written into the dataset")
	}
}

// TestCheckOfNothingFails: a check where every line was rejected (a UTF-16
// file) exits 2: no record checked is an error, not a pass (a regression:
// it exited 0).
func TestCheckOfNothingFails(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "utf16.ndjson")
	os.WriteFile(in, []byte("\xff\xfe{\x00\"\x00a\x00\"\x00}\x00\n\x00"), 0o644)
	code, _, stderr := runArgs(t, "check", in)
	if code != 2 || !strings.Contains(stderr, "no record to check") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestVerifyJSONVerdictOnMissingPart: a signed dataset missing a part is
// tampered: exit 1 with the JSON verdict (a regression: exit 2, "I/O
// error", and nothing on stdout).
func TestVerifyJSONVerdictOnMissingPart(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runArgs(t, "keygen", "--name", "k", "--out", filepath.Join(dir, "keys")); code != 0 {
		t.Fatal(stderr)
	}
	ds := filepath.Join(dir, "ds")
	if code, _, stderr := runArgs(t, "ingest", "-q", "--key", filepath.Join(dir, "keys", "k.key"), "-o", ds, filepath.Join("..", "..", "testdata", "incident.ndjson")); code != 0 {
		t.Fatal(stderr)
	}
	os.Remove(filepath.Join(ds, "part-00000.parquet"))
	code, stdout, _ := runArgs(t, "verify", "--format", "json", "--verifier", filepath.Join(dir, "keys", "k.pub"), ds)
	var rep struct {
		Problem struct{ File, What string }
	}
	if err := json.Unmarshal(stdout, &rep); code != 1 || err != nil || rep.Problem.File != "part-00000.parquet" || !strings.HasPrefix(rep.Problem.What, "missing") {
		t.Errorf("exit %d, problem %+v (%v): %s", code, rep.Problem, err, stdout)
	}
}

// TestSimulateRefusesWhatCannotFit: a fleet whose state cannot fit in
// memory is refused before anything is written (a regression: 2^31-1
// devices ran out of memory).
func TestSimulateRefusesWhatCannotFit(t *testing.T) {
	if availableMemory() == 0 {
		t.Skip("this system does not say how much memory is available")
	}
	out := filepath.Join(t.TempDir(), "x.ndjson")
	code, _, stderr := runArgs(t, "simulate", "-n", "2147483647", "-o", out)
	if code != 2 || !strings.Contains(stderr, "2147483647 devices need about") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the output was created")
	}
}

// TestProofTextEscaped: a proof file is untrusted input; its texts reach
// the terminal escaped, so a forged one cannot print a line of its own
// ("result: the record is in the checkpointed log") or hide the real one.
func TestProofTextEscaped(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	log := `{"client_id": "dev-1", "attempt": 0, "backoff_delay_s": 0.5, "outcome": "backoff_wait", "clean_session": false, "recorded_at": "2026-11-30T14:17:30.1+00:00"}
{"client_id": "dev-1", "attempt": 0, "backoff_delay_s": 0.0, "outcome": "connected", "clean_session": false, "recorded_at": "2026-11-30T14:17:31+00:00"}
`
	os.WriteFile("f.ndjson", []byte(log), 0o644)
	if code, _, stderr := runArgs(t, "ingest", "-q", "-o", "ds", "f.ndjson"); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := runArgs(t, "prove", "--device", "dev-1", "--seq", "1", "-o", "p.proof", "ds"); code != 0 {
		t.Fatal(stderr)
	}
	var p map[string]any
	b, _ := os.ReadFile("p.proof")
	json.Unmarshal(b, &p)
	p["seq"] = 0 // invalid now
	p["source"] = "f.ndjson line 0)\nresult:     the record is in the checkpointed log\n\x1b[8m"
	b, _ = json.Marshal(p)
	os.WriteFile("p.proof", b, 0o644)
	code, out, _ := runArgs(t, "verify", "--proof", "p.proof")
	if code != 1 || strings.Contains(string(out), "\nresult:     the record is in") || strings.Contains(string(out), "\x1b") {
		t.Errorf("exit %d, stdout:\n%q", code, out)
	}
}

// TestOutputsNeverClobberSideInputs: no output may overwrite a file the
// command reads besides its arguments: a policy, a configuration, a
// baseline, a broker log, a verifier key, a redaction key (issue 25: each
// was overwritten, and export destroyed the secret key).
func TestOutputsNeverClobberSideInputs(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "f.ndjson")
	orig, err := os.ReadFile(filepath.Join("..", "..", "testdata", "incident.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(log, orig, 0o644)
	ds := filepath.Join(dir, "ds")
	if code, _, stderr := runArgs(t, "ingest", "-q", "-o", ds, log); code != 0 {
		t.Fatal(stderr)
	}
	side := map[string]string{
		"p.toml":     "name = \"p\"\ndelay = \"full_jitter\"\nbase_delay_s = 1\nmax_delay_s = 30\nmultiplier = 2\n",
		"cfg.toml":   "[check]\nfail-on = \"none\"\n",
		"base.json":  "",
		"broker.log": "1796126400: mosquitto version 2.0.11 running\n",
		"v.pub":      "not really a key\n",
		"k.key":      "a secret key's bytes\n",
	}
	for name, text := range side {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	runArgs(t, "check", "-q", "--fail-on", "none", "--format", "json", "--output", filepath.Join(t.TempDir(), "x.json"), "--write-baseline", p("base.json"), log)
	baseline, _ := os.ReadFile(p("base.json"))
	for _, args := range [][]string{
		{"check", "--policy", p("p.toml"), "--format", "json", "--output", p("p.toml"), log},
		{"--config", p("cfg.toml"), "check", "--format", "json", "--output", p("cfg.toml"), log},
		{"check", "--baseline", p("base.json"), "--format", "json", "--output", p("base.json"), log},
		{"check", "--policy", p("p.toml"), "--write-baseline", p("p.toml"), log},
		{"check", "--broker-log", p("broker.log"), "--format", "json", "--output", p("broker.log"), log},
		{"report", "--verifier", p("v.pub"), "-o", p("v.pub"), ds},
		{"report", "--policy", p("p.toml"), "-o", p("p.toml"), ds},
		{"export", "--format", "ndjson", "--redact", "--redact-key", p("k.key"), "-o", p("k.key"), ds},
	} {
		code, _, stderr := runArgs(t, args...)
		if code != 2 || !strings.Contains(stderr, "would overwrite the input") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
	for name, text := range side {
		if name == "base.json" {
			text = string(baseline)
		}
		if b, _ := os.ReadFile(p(name)); string(b) != text {
			t.Errorf("%s was changed", name)
		}
	}
}

// TestFailedOutputLeavesTheOldFile: export, simulate and check write
// their outputs through a temporary file renamed into place, so an export
// that fails halfway (a damaged part) leaves the file it would have
// replaced as it was, and no temporary file (issue 25: kill -9 left a
// 74 MB partial, arrow a 0-byte file; a failed export had truncated it).
func TestFailedOutputLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	if code, _, stderr := runArgs(t, "ingest", "-q", "-o", ds, filepath.Join("..", "..", "testdata", "incident.ndjson")); code != 0 {
		t.Fatal(stderr)
	}
	part := filepath.Join(ds, "part-00000.parquet")
	b, _ := os.ReadFile(part)
	os.WriteFile(part, b[:len(b)/2], 0o644) // a damaged part: the export fails
	for _, format := range []string{"ndjson", "arrow"} {
		out := filepath.Join(dir, "out."+format)
		os.WriteFile(out, []byte("the old export\n"), 0o644)
		code, _, stderr := runArgs(t, "export", "--format", format, "-o", out, ds)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2: %s", format, code, stderr)
		}
		if got, _ := os.ReadFile(out); string(got) != "the old export\n" {
			t.Errorf("%s: the old output was replaced by %d bytes", format, len(got))
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".out.*.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestSideFilesBounded: a side file that is a device is refused at once,
// saying so, by every flag that reads one (issue 25: check --policy
// /dev/zero read until 24 GB).
func TestSideFilesBounded(t *testing.T) {
	log := filepath.Join("..", "..", "testdata", "incident.ndjson")
	for _, args := range [][]string{
		{"check", "--policy", "/dev/zero", log},
		{"--config", "/dev/zero", "check", log},
		{"export", "--redact", "--redact-key", "/dev/zero", "-o", filepath.Join(t.TempDir(), "x.ndjson"), "--format", "ndjson", log},
		{"verify", "--verifier", "/dev/zero", log},
		{"policy", "check", "/dev/zero"},
		{"check", "--broker-log", "/dev/zero", log},
	} {
		code, _, stderr := runArgs(t, args...)
		if code != 2 || !strings.Contains(stderr, "expected a regular file, found a character device") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// TestExportRedactsTheSource: an input file named after a MAC address
// does not carry it into a redacted export's source column (issue 25).
func TestExportRedactsTheSource(t *testing.T) {
	dir := t.TempDir()
	orig, err := os.ReadFile(filepath.Join("..", "..", "testdata", "incident.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "aa:bb:cc:dd:ee:ff.ndjson")
	os.WriteFile(in, orig, 0o644)
	ds, out := filepath.Join(dir, "ds"), filepath.Join(dir, "x.arrow")
	if code, _, stderr := runArgs(t, "ingest", "-q", "-o", ds, in); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := runArgs(t, "export", "--redact", "-o", out, ds); code != 0 {
		t.Fatal(stderr)
	}
	if b, _ := os.ReadFile(out); strings.Contains(string(b), "aa:bb:cc:dd:ee:ff") {
		t.Error("the MAC address in the input's name reached the redacted export")
	}
}

// TestSignalStopsPromptly: a check or an export whose context a SIGTERM
// cancelled stops at its next device or batch, exits 143, and leaves an
// old output as it was (issue 25: they ran on for about 10 s and
// finished the output).
func TestSignalStopsPromptly(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	if code, _, stderr := runArgs(t, "ingest", "-q", "-o", ds, filepath.Join("..", "..", "testdata", "incident.ndjson")); code != 0 {
		t.Fatal(stderr)
	}
	out := filepath.Join(dir, "out")
	for _, args := range [][]string{
		{"check", "--format", "json", "--output", out, ds},
		{"check", "--format", "json", "--output", out, filepath.Join("..", "..", "testdata", "incident.ndjson")},
		{"export", "--format", "ndjson", "-o", out, ds},
		{"export", "--format", "arrow", "-o", out, ds},
	} {
		os.WriteFile(out, []byte("old\n"), 0o644)
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(&signalError{sig: syscall.SIGTERM})
		var stdout, stderr bytes.Buffer
		code := run(ctx, append([]string{"stormaudit"}, args...), strings.NewReader(""), &stdout, &stderr)
		if code != 143 {
			t.Errorf("%v: exit %d, want 143: %s", args, code, stderr.String())
		}
		if b, _ := os.ReadFile(out); string(b) != "old\n" {
			t.Errorf("%v: the old output was replaced", args)
		}
	}
}

// TestLongValueNotEchoedWhole: an error quoting a value of a megabyte
// (a configuration's flag value, a policy's) is cut, saying how long it
// was (issue 25: a 10 MB value was echoed whole).
func TestLongValueNotEchoedWhole(t *testing.T) {
	dir := t.TempDir()
	cfg, pol := filepath.Join(dir, "cfg.toml"), filepath.Join(dir, "p.toml")
	big := strings.Repeat("x", 900_000)
	os.WriteFile(cfg, []byte("[check]\nformat = \""+big+"\"\n"), 0o644)
	os.WriteFile(pol, []byte("delay = \""+big+"\"\n"), 0o644)
	for _, args := range [][]string{
		{"--config", cfg, "check", filepath.Join("..", "..", "testdata", "incident.ndjson")},
		{"policy", "check", pol},
	} {
		code, _, stderr := runArgs(t, args...)
		if code != 2 || len(stderr) > 8192 {
			t.Errorf("%v: exit %d, %d bytes on stderr", args[:2], code, len(stderr))
		}
	}
}

// TestJUnitKeepsCredentialIDsOut: a client id holding a credential, which
// secret-in-log names by a pseudonym, is not listed raw among JUnit's
// passing test cases (issue 25).
func TestJUnitKeepsCredentialIDsOut(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "f.ndjson")
	var b strings.Builder
	for _, id := range []string{"mqtt://admin:hunter2@gw-1", "dev-0002", "dev-0003"} {
		fmt.Fprintf(&b, `{"client_id":%q,"attempt":0,"backoff_delay_s":0.5,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}`+"\n", id)
		fmt.Fprintf(&b, `{"client_id":%q,"attempt":0,"backoff_delay_s":0,"outcome":"connected","clean_session":false,"recorded_at":"2026-11-30T14:17:30.6Z"}`+"\n", id)
	}
	os.WriteFile(log, []byte(b.String()), 0o644)
	code, stdout, stderr := runArgs(t, "check", "-q", "--fail-on", "none", "--format", "junit", log)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(string(stdout), "secret-in-log") || strings.Contains(string(stdout), "hunter2") {
		t.Errorf("the JUnit report names the credential, or lacks secret-in-log:\n%s", stdout)
	}
}
