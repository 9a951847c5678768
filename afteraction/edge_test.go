package afteraction

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/ingest"
)

// TestReportEdges writes the report of logs at the edges of what a
// report shows: one record, a fleet that never connected, a device whose
// clock is decades off, sessions still up at the end. Each must give a
// whole page (no panic in a chart of nothing) that says what it lacks.
func TestReportEdges(t *testing.T) {
	cases := map[string]struct {
		lines []string
		want  []string
	}{
		"one record": {
			lines: []string{`{"client_id":"a","attempt":0,"backoff_delay_s":0,"outcome":"connected","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}`},
			want:  []string{"No incident", "No device recovered from a loss", "No findings."},
		},
		"never connected": {
			lines: []string{
				`{"client_id":"a","attempt":0,"backoff_delay_s":1,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}`,
				`{"client_id":"a","attempt":1,"backoff_delay_s":0,"outcome":"attempt_failed","clean_session":false,"recorded_at":"2026-11-30T14:17:31Z","failure_class":"transient"}`,
				`{"client_id":"b","attempt":0,"backoff_delay_s":1,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}`,
			},
			want: []string{"No incident", `aria-label="Socket-opens and connects over the whole log"`},
		},
		"a clock decades off": {
			lines: []string{
				`{"client_id":"a","attempt":0,"backoff_delay_s":0,"outcome":"connected","clean_session":false,"recorded_at":"1990-01-01T00:00:00Z"}`,
				`{"client_id":"a","attempt":0,"backoff_delay_s":0,"outcome":"disconnected","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}`,
				`{"client_id":"a","attempt":0,"backoff_delay_s":0.5,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:30.1Z"}`,
				`{"client_id":"a","attempt":0,"backoff_delay_s":0,"outcome":"connected","clean_session":false,"recorded_at":"2026-11-30T14:17:31Z"}`,
			},
			want: []string{`aria-label="time to recover, cumulative distribution"`},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.ndjson")
			if err := os.WriteFile(in, []byte(strings.Join(c.lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ds := filepath.Join(dir, "ds")
			if _, err := ingest.Run(context.Background(), ds, []ingest.Source{{Name: in}}, ingest.Options{}); err != nil {
				t.Fatal(err)
			}
			rep, err := Gather(ds, analyze.Options{}, DefaultOptions)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := Write(&b, rep, DefaultOptions); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if !strings.HasSuffix(strings.TrimSpace(page), "</html>") {
				t.Errorf("the page is cut short: ...%s", page[max(0, len(page)-200):])
			}
			for _, w := range c.want {
				if !strings.Contains(page, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
		})
	}
}
