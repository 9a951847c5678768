package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileID is a client id that clears the screen, sets the window title,
// rings the bell and turns the rest of the line right to left.
const hostileID = "evil\x1b[2J\x1b]0;pwned\x07\u202eti"

// hostileLog is a log of one device with hostileID, and a line whose
// outcome holds an escape (rejected at ingest, quoted in the summary).
const hostileLog = `{"client_id":"evil\u001b[2J\u001b]0;pwned\u0007\u202eti","attempt":0,"backoff_delay_s":0,"outcome":"disconnected","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z","host_id":"gw\u001b[31m"}
{"client_id":"evil\u001b[2J\u001b]0;pwned\u0007\u202eti","attempt":0,"backoff_delay_s":900,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}
{"client_id":"evil\u001b[2J\u001b]0;pwned\u0007\u202eti","attempt":0,"backoff_delay_s":900,"outcome":"connected","clean_session":false,"recorded_at":"2026-11-30T14:32:30.1Z"}
{"client_id":"other","attempt":0,"backoff_delay_s":0,"outcome":"bad\u001b]0;x\u0007","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}
`

// TestDeviceStringsSafe runs every command that shows device strings to a
// person on hostileLog and checks that no terminal control gets through,
// that the id is shown escaped, and that JSON and SARIF keep it raw.
func TestDeviceStringsSafe(t *testing.T) {
	log := filepath.Join(t.TempDir(), "hostile.ndjson")
	if err := os.WriteFile(log, []byte(hostileLog), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", "--policy", "full-jitter", log},
		{"check", "--policy", "full-jitter", "--format", "github", log},
		{"timeline", "--device", hostileID, log},
		{"timeline", "--device", "evil", log}, // absent: the error names the near ids
	} {
		_, stdout, stderr := runArgs(t, args...)
		out := string(stdout) + stderr
		for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
			if strings.Contains(out, bad) {
				t.Errorf("%v: the output holds %q:\n%s", args[:2], bad, out)
			}
		}
		if !strings.Contains(out, `evil\x1b[2J\x1b]0;pwned`) {
			t.Errorf("%v: the escaped id is not in the output:\n%s", args[:2], out)
		}
	}
	for _, format := range []string{"json", "sarif"} {
		_, stdout, _ := runArgs(t, "check", "-q", "--policy", "full-jitter", "--format", format, log)
		if !strings.Contains(string(stdout), `evil\u001b[2J\u001b]0;pwned\u0007`) {
			t.Errorf("%s does not keep the raw id (JSON-escaped):\n%s", format, stdout)
		}
	}
	// JUnit is XML, which cannot hold a control character at all: the
	// file must still parse
	_, stdout, _ := runArgs(t, "check", "-q", "--policy", "full-jitter", "--format", "junit", log)
	dec := xml.NewDecoder(bytes.NewReader(stdout))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("junit: not XML: %v\n%s", err, stdout)
		}
	}
	if !bytes.Contains(stdout, []byte("evil")) {
		t.Errorf("junit does not name the device:\n%s", stdout)
	}
}
