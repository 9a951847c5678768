package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/analyze"
)

func TestEscape(t *testing.T) {
	for _, tt := range []struct{ in, data, prop string }{
		{"plain text", "plain text", "plain text"},
		{"100%", "100%25", "100%25"},
		{"a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac"},
		{"file:1,2", "file:1,2", "file%3A1%2C2"},
		{"%0A", "%250A", "%250A"},
		{"::error::", "::error::", "%3A%3Aerror%3A%3A"},
	} {
		if got := EscapeData(tt.in); got != tt.data {
			t.Errorf("EscapeData(%q) = %q, want %q", tt.in, got, tt.data)
		}
		if got := EscapeProperty(tt.in); got != tt.prop {
			t.Errorf("EscapeProperty(%q) = %q, want %q", tt.in, got, tt.prop)
		}
	}
}

func githubLines(t *testing.T, r *analyze.Result, limit int) []string {
	t.Helper()
	var b bytes.Buffer
	if err := GitHub(&b, r, limit); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

func TestGitHub(t *testing.T) {
	lines := githubLines(t, fixture(), -1)
	want := []string{
		"::error file=logs/gw-a.ndjson,line=12,title=stormaudit delay-bounds%3A dev-0002::dev-0002 drew 41.2 s at attempt 3%0Athe ceiling at attempt 3 is min(120, 1*2^3) = 8 s%0Arecords: logs/gw-a.ndjson:12, logs/gw-a.ndjson:14",
		"::error file=odd%2Cname%3Ax.ndjson,line=3,title=stormaudit delay-bounds%3A dev-0003::dev-0003 drew -1 s%0Aa delay is at least 0%0Arecords: odd,name:x.ndjson:3",
		"::error title=stormaudit resync%3A fleet::40 devices drew the same delays%0A100%25 of attempts at 5 s",
		"::warning title=stormaudit hot-loop%3A dev-0001::dev-0001 retried 12 times in 2 s%0A12 delays of 0 s%0Arecords: stdin:2",
		"::notice file=logs/gw-a.ndjson,line=20,title=stormaudit hot-loop%3A dev-0002::dev-0002 retried twice at once%0A2 delays of 0 s%0Arecords: logs/gw-a.ndjson:20",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\ngot  %s\nwant %s", i, lines[i], want[i])
		}
	}
}

func TestGitHubCap(t *testing.T) {
	lines := githubLines(t, fixture(), 2)
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 2 annotations and a summary:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	const want = "::notice title=stormaudit check::3 more findings not annotated (1 error, 1 warning, 1 info): stormaudit check --format text lists them"
	if lines[2] != want {
		t.Errorf("summary:\ngot  %s\nwant %s", lines[2], want)
	}
	r := fixture()
	for range 20 {
		r.Findings = append(r.Findings, r.Findings[0])
	}
	if lines := githubLines(t, r, 0); len(lines) != DefaultGitHubMax+1 || !strings.HasPrefix(lines[DefaultGitHubMax], "::notice title=stormaudit check::15 more findings") {
		t.Errorf("default cap: %d lines, last %s", len(lines), lines[len(lines)-1])
	}
	if lines := githubLines(t, empty(), 0); len(lines) != 1 || lines[0] != "" {
		t.Errorf("no findings: %q, want no output", lines)
	}
}

// TestGitHubLocatesRejectedLines: a finding resting on lines that are no
// record (lines rejected at ingest) annotates each, up to five in all,
// in the file it was read from.
func TestGitHubLocatesRejectedLines(t *testing.T) {
	r := fixture()
	var refs []analyze.Ref
	for i := range 7 {
		refs = append(refs, analyze.Ref{File: -1, Row: -1, Source: 0, Line: int64(10 * (i + 1))})
	}
	r.Findings = []analyze.Finding{{Rule: "audit-gap", Severity: analyze.Warning, Device: analyze.Fleet,
		Message: "7 lines rejected at ingest: not in the dataset", Records: refs}}
	var b strings.Builder
	if err := GitHub(&b, r, 0); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		i := strings.Index(l, ",title=")
		lines = append(lines, l[:i])
	}
	want := []string{"::warning file=logs/gw-a.ndjson,line=10", "::warning file=logs/gw-a.ndjson,line=20", "::warning file=logs/gw-a.ndjson,line=30",
		"::warning file=logs/gw-a.ndjson,line=40", "::warning file=logs/gw-a.ndjson,line=50"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("annotations:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// a finding about records annotates its first record alone
	b.Reset()
	GitHub(&b, fixture(), 0)
	if n := strings.Count(b.String(), "\n"); n != len(fixture().Findings) {
		t.Errorf("%d annotations for %d findings about records", n, len(fixture().Findings))
	}
}
