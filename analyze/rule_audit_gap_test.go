package analyze

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
)

func TestAuditGapOutcomes(t *testing.T) {
	const (
		bw     = auditfmt.BackoffWait
		failed = auditfmt.AttemptFailed
	)
	tests := []struct {
		name string
		evs  []Event
		want int // attempts flagged
	}{
		{"failure recorded", []Event{unitEvent(0, bw, 0, 1), unitEvent(1.05, failed, 1, 1), unitEvent(1.05, bw, 1, 2)}, 0},
		{"failure missing", []Event{unitEvent(0, bw, 0, 1), unitEvent(1.05, bw, 1, 2)}, 1},
		{"failure missing after a rate-limit wait", []Event{unitEvent(0, bw, 0, 1), unitEvent(1, auditfmt.RateLimitedWait, 0, 0.25), unitEvent(1.3, bw, 1, 2)}, 1},
		{"counter unchanged", []Event{unitEvent(0, bw, 3, 1), unitEvent(1.05, bw, 3, 2)}, 1},
		{"stopped while it waited", []Event{unitEvent(0, bw, 0, 1), unitEvent(0.5, auditfmt.Stopped, 0, 0), unitEvent(60, bw, 0, 1)}, 0},
		{"disconnected while it waited", []Event{unitEvent(0, bw, 0, 1), unitEvent(0.5, auditfmt.Disconnected, 0, 0), unitEvent(0.5, bw, 0, 1)}, 0},
		{"the log ends while it waits", []Event{unitEvent(0, bw, 0, 1), unitEvent(1.05, failed, 1, 1), unitEvent(1.05, bw, 1, 2)}, 0},
		{"three missing", []Event{unitEvent(0, bw, 0, 1), unitEvent(1, bw, 1, 2), unitEvent(3, bw, 2, 4), unitEvent(7, bw, 3, 8), unitEvent(15, bw, 4, 8)}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, got := runRule(&auditGap{}, 0, unitDevice("dev-1", tc.evs...))
			if tc.want == 0 {
				if len(got) > 0 {
					t.Errorf("want no finding:%s", describe(got))
				}
				return
			}
			if len(got) != 1 || !strings.HasPrefix(got[0].Message, nOf(tc.want, "attempt outcome")) {
				t.Fatalf("want one finding of %d attempts:%s", tc.want, describe(got))
			}
			if n := len(got[0].Records); n != min(2*tc.want, MaxRefs) {
				t.Errorf("%d records, want the backoff_waits either side of each gap", n)
			}
		})
	}
}

func TestAuditGapSeq(t *testing.T) {
	evs := func(seqs ...int64) []Event {
		var out []Event
		for i, s := range seqs {
			e := unitEvent(float64(i), auditfmt.AttemptFailed, 1, 1)
			if i%2 == 0 {
				e = unitEvent(float64(i), auditfmt.BackoffWait, 1, 1)
			}
			e.Seq = s
			out = append(out, e)
		}
		return out
	}
	tests := []struct {
		name string
		evs  []Event
		want string // the message, "" for none
	}{
		{"contiguous", evs(0, 1, 2, 3), ""},
		{"collection began late", evs(1042, 1043, 1044), ""},
		{"one missing", evs(0, 1, 3, 4), "1 record missing from device_seq"},
		{"two gaps", evs(3, 4, 7, 8, 10), "3 records missing from device_seq"},
		{"some records without device_seq", append(evs(0, 1, 4), unitEvent(9, auditfmt.Connected, 0, 1)), "2 records missing from device_seq"},
		// Build orders by device_seq and interleaves the two runs, which
		// makes outcomes look unrecorded; the sequence has no gap
		{"a restarted counter", evs(0, 1, 2, 0, 1), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, got := runRule(&auditGap{}, 0, unitDevice("dev-1", tc.evs...))
			var msgs []string
			for _, f := range got {
				if strings.Contains(f.Message, "device_seq") {
					msgs = append(msgs, f.Message)
				}
			}
			if want := slices.DeleteFunc([]string{tc.want}, func(s string) bool { return s == "" }); !slices.Equal(msgs, want) {
				t.Errorf("got %q, want %q:%s", msgs, want, describe(got))
			}
		})
	}
}

func TestAuditGapRejects(t *testing.T) {
	dir := t.TempDir()
	rejects := `{"source":"a.ndjson","line":3,"field":"backoff_delay_s","error":"a.ndjson:3: backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN","raw":"{}"}
{"source":"b.csv","line":9,"error":"expected a JSON object, found an empty line","raw":""}
`
	if err := os.WriteFile(filepath.Join(dir, dataset.RejectsName), []byte(rejects), 0o644); err != nil {
		t.Fatal(err)
	}
	lines, err := firstRejects(filepath.Join(dir, dataset.RejectsName), MaxRefs)
	var got []string
	for _, e := range lines {
		got = append(got, e.text())
	}
	want := []string{"a.ndjson:3: backoff_delay_s: expected 0, or a number from 1e-9 to 2592000 (30 days), found NaN", "b.csv:9: expected a JSON object, found an empty line"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("firstRejects = %q, %v; want %q", got, err, want)
	}
	if one, _ := firstRejects(filepath.Join(dir, dataset.RejectsName), 1); len(one) != 1 {
		t.Errorf("firstRejects(1) = %v", one)
	}

	c := &Context{Dataset: dir, End: unitT0 + 60e9, Sources: []string{"b.csv", "a.ndjson"}, Manifest: &dataset.Manifest{Totals: dataset.Counts{Lines: 10, Accepted: 8, Rejected: 2},
		Inputs: []dataset.Input{{Name: "a.ndjson", Counts: dataset.Counts{Lines: 6, Accepted: 5, Rejected: 1}}}}}
	r := &auditGap{First: unitT0, Seen: true}
	r.Finish(c)
	if len(c.findings) != 1 || c.findings[0].Device != Fleet || !strings.Contains(c.findings[0].Explanation, want[1]) {
		t.Errorf("want one fleet finding listing the rejects:%s", describe(c.findings))
	}
	// located: SARIF and annotations place it at each rejected line
	if refs := c.findings[0].Records; !slices.Equal(refs, []Ref{{File: -1, Row: -1, Source: 1, Line: 3}, {File: -1, Row: -1, Source: 0, Line: 9}}) {
		t.Errorf("records %v, want a.ndjson:3 and b.csv:9", refs)
	}
	c.findings, c.Dataset = nil, filepath.Join(dir, "missing")
	r.Finish(c)
	if len(c.findings) != 1 || !strings.Contains(c.findings[0].Explanation, "could not be read") {
		t.Errorf("without rejects.ndjson: want a finding that says so:%s", describe(c.findings))
	}
}
