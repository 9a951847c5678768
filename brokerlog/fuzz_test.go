package brokerlog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzRead: Read never panics, and whatever it returns without an error
// accounts for every record (checkAccounting). The corpus is seeded with
// every sample under testdata, in each format Read can be told.
func FuzzRead(f *testing.F) {
	files, err := filepath.Glob("testdata/*")
	if err != nil {
		f.Fatal(err)
	}
	seeds := 0
	for _, file := range files {
		if filepath.Ext(file) == ".md" {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for format := range uint8(len(formatNames)) {
			f.Add(b, format, false)
		}
		seeds++
	}
	if seeds == 0 {
		f.Fatal("no samples under testdata to seed the corpus")
	}
	for _, s := range []string{
		"", "\n", "[", "[]", "[{", "[\"\\", "{}", "{\"clientid\":\"c\",\"reason\":1}",
		"2026-12-01T15:15:18Z 1: ", "1: New client connected from a as  (p2, c1, k1).",
		"2026-12-01 15:15:18,123 - Client ID: , IP:  disconnected gracefully.",
		"\x1f\x8b", "\xef\xbb\xbf[]",
	} {
		f.Add([]byte(s), uint8(0), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, format uint8, zoned bool) {
		opt := Options{Format: Format(format % uint8(len(formatNames)))}
		if zoned {
			opt.TZ = time.FixedZone("", -9*3600-30*60)
		}
		log, err := Read(bytes.NewReader(data), "fuzz", opt)
		if err != nil {
			if log != nil {
				t.Errorf("an error (%v) and a log", err)
			}
			return
		}
		checkAccounting(t, log)
		if opt.Format != Detect && log.Format != opt.Format {
			t.Errorf("told %v, read %v", opt.Format, log.Format)
		}
	})
}

// FuzzParseRecord: each format's parser, fed one record, never panics,
// and an event it makes is a valid one. The corpus is seeded with every
// line of the samples.
func FuzzParseRecord(f *testing.F) {
	files, err := filepath.Glob("testdata/*")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		if ext := filepath.Ext(file); ext == ".md" || ext == ".gz" {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for line := range bytes.SplitSeq(b, []byte("\n")) {
			for format := Mosquitto; format <= HiveMQ; format++ {
				f.Add(line, uint8(format))
			}
		}
	}
	f.Fuzz(func(t *testing.T, line []byte, format uint8) {
		p := &parser{format: Format(format%4 + 1), tz: time.FixedZone("", 14*3600)}
		var out outcome
		p.parse(line, &out)
		if out.why != "" || out.skip {
			return
		}
		e := out.ev
		if e.Kind < Accepted || e.Kind > Status || e.Res <= 0 || (e.Code != 0) != (e.Kind == Refused) ||
			e.Reason != ReasonUnknown && e.Kind != Closed || e.Clean < -1 || e.Clean > 1 || e.Keepalive < 0 {
			t.Errorf("%q: bad event %+v", line, e)
		}
	})
}

// FuzzWillLines runs Mosquitto messages, one a line, through the reader of
// wills and status publishes: it never panics, and a Status names a
// client whose will it read.
func FuzzWillLines(f *testing.F) {
	f.Add("New client connected from 127.0.0.1:1 as a (p2, c0, k20).\nWill message specified (7 bytes) (r1, q1).\n\tstatus/a\n" +
		"Received PUBLISH from a (d0, q1, r1, m1, 'status/a', ... (6 bytes))\nReceived PUBLISH from a (d0, q1, r0, m2, 'tele/a', ... (9 bytes))")
	f.Add("New client connected from 127.0.0.1:1 as a (d (p2, c0, k20).\nWill message specified (7 bytes) (r1, q1).\n\tt', ... (\n" +
		"Received PUBLISH from a (d (d0, q1, r1, m1, 't', ... (', ... (6 bytes))\nNo will message specified.")
	f.Fuzz(func(t *testing.T, lines string) {
		p := &parser{format: Mosquitto, tz: time.UTC}
		wills := map[string]bool{}
		for _, line := range strings.Split(lines, "\n") {
			var out outcome
			p.parse([]byte("1796613059: "+line), &out)
			switch out.ev.Kind {
			case Will:
				wills[out.ev.Client] = true
			case Status:
				if !wills[out.ev.Client] {
					t.Fatalf("a status of %q, whose will was not read: %q", out.ev.Client, line)
				}
			}
		}
	})
}
