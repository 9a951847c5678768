package afteraction

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
	"gonum.org/v1/plot/plotter"
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
		"a clock centuries off": { // the span overflows int64 ns
			lines: []string{
				`{"client_id":"a","attempt":0,"backoff_delay_s":0,"outcome":"connected","clean_session":false,"recorded_at":"1700-01-01T00:00:00Z"}`,
				`{"client_id":"a","attempt":0,"backoff_delay_s":0,"outcome":"disconnected","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}`,
				`{"client_id":"a","attempt":0,"backoff_delay_s":1,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:30.1Z"}`,
				`{"client_id":"a","attempt":1,"backoff_delay_s":0,"outcome":"attempt_failed","clean_session":false,"recorded_at":"2026-11-30T14:17:31.2Z","failure_class":"transient"}`,
				`{"client_id":"b","attempt":0,"backoff_delay_s":1,"outcome":"backoff_wait","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}`,
				`{"client_id":"b","attempt":1,"backoff_delay_s":0,"outcome":"connected","clean_session":false,"recorded_at":"2026-11-30T14:17:31.5Z"}`,
			},
			want: []string{`aria-label="Socket-opens and connects over the whole log"`, `aria-label="the worst devices&#39; sessions and socket-opens over time"`,
				"1 socket-opens and connects far from the rest (device clocks off) are outside the chart."},
		},
		"losses and nothing after": { // an incident with no socket-open or connect to chart
			lines: func() []string {
				var ls []string
				for _, id := range []string{"a", "b", "c", "d", "e"} {
					ls = append(ls, `{"client_id":"`+id+`","attempt":0,"backoff_delay_s":0,"outcome":"connected","clean_session":false,"recorded_at":"2026-11-30T14:00:00Z"}`,
						`{"client_id":"`+id+`","attempt":0,"backoff_delay_s":0,"outcome":"disconnected","clean_session":false,"recorded_at":"2026-11-30T14:17:30Z"}`)
				}
				return ls
			}(),
			want: []string{"<h3>Incident 1: 2026-11-30T14:17:30Z</h3>", "none had connected again when the log ends"},
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
			rep := gatherLog(t, in, analyze.Options{})
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

// TestCDFPoints checks the CDF's corners: post-steps over all the losses,
// so a curve reaches a share only at the time that many had recovered,
// and ends below 1 by the losses no connect ended.
func TestCDFPoints(t *testing.T) {
	got := cdfPoints(cdfSeries{n: 2, at: func(k int) time.Duration { return []time.Duration{time.Second, 10 * time.Second}[k] }, losses: 4})
	want := plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0.25}, {X: 10, Y: 0.5}}
	if !slices.Equal(got, want) {
		t.Errorf("cdfPoints = %v, want %v", got, want)
	}
	ttr := make([]time.Duration, 10*maxCDFPoints+3)
	for i := range ttr {
		ttr[i] = time.Duration(i) * time.Millisecond
	}
	got = cdfPoints(cdfSeries{n: len(ttr), at: func(k int) time.Duration { return ttr[k] }, losses: len(ttr)})
	if len(got) > maxCDFPoints+2 || got[len(got)-1] != (plotter.XY{X: ttr[len(ttr)-1].Seconds(), Y: 1}) {
		t.Errorf("thinned to %d points ending at %v; want at most %d ending at (%v, 1)", len(got), got[len(got)-1], maxCDFPoints+2, ttr[len(ttr)-1].Seconds())
	}
}

// TestShellQuote checks that a command the page suggests keeps a client
// id one word, with nothing in it that a shell expands.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"dev-0042":      "dev-0042",
		"ds/incident.1": "ds/incident.1",
		"$(rm -rf ~)":   `'$(rm -rf ~)'`,
		"a'b":           `'a'\''b'`,
		"`id`":          "'`id`'",
		"":              "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestReportBounded checks the page's size against a fleet that makes
// every part grow: 30 devices through 300 broker flaps, each a session,
// an outage and an incident.
func TestReportBounded(t *testing.T) {
	p, err := policy.Preset("fixed")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "flaps.ndjson")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.Run(context.Background(), simulate.Config{Devices: 30, Outage: time.Minute, Policy: p, Seed: 1, Flaps: 300, FlapUp: 3 * time.Second, FlapDown: 20 * time.Second}, f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rep := gatherLog(t, log, analyze.Options{})
	if n := len(rep.Overview.Result.Summary.Fleet.Incidents); n < 100 {
		t.Fatalf("the flapping fleet has %d incidents; the test wants many", n)
	}
	var b bytes.Buffer
	if err := Write(&b, rep, DefaultOptions); err != nil {
		t.Fatal(err)
	}
	if b.Len() > 2<<20 {
		t.Errorf("the page is %d bytes; the bounds allow about 1 MB for this fleet", b.Len())
	}
	if n := strings.Count(b.String(), `<h3>Incident `); n != maxListed {
		t.Errorf("%d incidents listed, want %d", n, maxListed)
	}
}

// gatherLog ingests the audit log at path into a dataset beside it and
// gathers its report with opts and DefaultOptions.
func gatherLog(t testing.TB, path string, opts analyze.Options) *Report {
	t.Helper()
	ds := filepath.Join(filepath.Dir(path), "ds")
	if _, err := ingest.Run(context.Background(), ds, []ingest.Source{{Name: path}}, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	rep, err := Gather(ds, opts, DefaultOptions)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Tick labels carry no trailing zeros.
func TestPlainTicks(t *testing.T) {
	for _, r := range [][2]float64{{0, 2500}, {0, 1}, {0, 0.3}, {100, 101}} {
		for _, tk := range (plainTicks{}).Ticks(r[0], r[1]) {
			if l := tk.Label; l != "" && strings.Contains(l, ".") && (strings.HasSuffix(l, "0") || strings.HasSuffix(l, ".")) {
				t.Errorf("range %v: tick label %q", r, l)
			}
			if l := tk.Label; l != "" {
				if v, err := strconv.ParseFloat(l, 64); err != nil || math.Abs(v-tk.Value) > 1e-9*math.Max(1, math.Abs(tk.Value)) {
					t.Errorf("range %v: label %q for %g", r, l, tk.Value)
				}
			}
		}
	}
}
