package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
)

func textOf(t *testing.T, r *analyze.Result, opts TextOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := Text(&b, r, opts); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestText checks the report's parts in order.
func TestText(t *testing.T) {
	out := textOf(t, fixture(), TextOptions{})
	want := []string{
		"verdict:  5 devices lost the broker at 2026-11-30T14:17:30Z for 1s; 4 of 5 recovered, time to recover (from each device's own loss) p50 2s, p90 4s; " +
			"1 never came back; a storm on its return: recorded connects peaked at 3 in 1s, with retry timers in lockstep (resync); " +
			"why: nothing answered: 7 connects failed (transient) from 5 devices, with no CONNACK.\n",
		"on corrected times: 1 device's clock was off (below).\n",
		"          why: nothing answered: 7 connects failed (transient) from 5 devices, with no CONNACK.\n" +
			"          service: 4 of 5 record it; 4 served again, time to first useful service (from each device's own loss) p50 9s, p90 12s, max 12s " +
			"(to reconnect: p50 2s, p90 4s); 1 device connected but not served within 5s: dev-0001 (connected 2s after the loss, served 12s after).\n" +
			"          1 device never came back (the log ended too soon for 1 of them):\n" +
			"            dev-0004: waiting a backoff of 1m0s due at 2026-11-30T14:18:33Z (after the log ended); 3 attempts since its loss\n",
		"checked:  5 devices, 40 records in dataset ds; 1 line rejected at ingest\n",
		"policy:   declared full-jitter: delay full_jitter, base_delay_s 1,",
		"findings: 5 (3 error, 1 warning, 1 info)\n",
		"  rule          error  warning  info  devices\n" +
			"  delay-bounds      2        0     0        2\n" +
			"  resync            1        0     0        1\n" +
			"  hot-loop          0        1     1        2\n",
		"delay-bounds: a delay outside the policy's bounds (2 findings)\n" +
			"  error dev-0002 2026-11-30T14:17:35Z\n" +
			"    dev-0002 drew 41.2 s at attempt 3\n" +
			"    the ceiling at attempt 3 is min(120, 1*2^3) = 8 s\n" +
			"    records: logs/gw-a.ndjson:12, logs/gw-a.ndjson:14\n" +
			"  error dev-0003 2026-11-30T14:17:30Z to 2026-11-30T14:17:31.5Z\n",
		"resync: retry timers move in phase (1 finding)\n  error fleet 2026-11-30T14:17:30Z to 2026-11-30T14:18:30Z\n",
		"hot-loop: a tight retry loop (2 findings)\n",
		"    records: stdin:2\n",
		"notes:\n  spacing: min_connect_spacing_s is not declared\n",
		"fleet:    5 devices, 20 socket-opens; socket-opens (the broker up or not) peaked at 5 in 1s at 2026-11-30T14:17:35Z\n",
		"recovery: 4 of 5 devices that lost the connection recovered; time to recover p50 2s, p90 4s, p99 4s, max 4s; fairness 0.83 (Jain's index of the times to recover: 1 when every device took as long, 1/n when one took all)\n",
	}
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("missing, or out of order:\n%s\nin:\n%s", w, out)
		}
		rest = rest[i+len(w):]
	}
}

func TestTextCaps(t *testing.T) {
	r := fixture()
	f := r.Findings[0]
	for i := range 12 {
		f.Records = append(f.Records, analyze.Ref{Source: 0, Line: int64(100 + i)})
	}
	r.Findings[0] = f
	out := textOf(t, r, TextOptions{PerRule: 1})
	for _, want := range []string{
		"  ... and 1 more delay-bounds finding (--format json lists every finding)\n",
		"  ... and 1 more hot-loop finding",
		"logs/gw-a.ndjson:102 and 9 more\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "dev-0003") {
		t.Errorf("PerRule 1 shows the second finding:\n%s", out)
	}
	all := textOf(t, r, TextOptions{PerRule: -1, Records: -1})
	if strings.Contains(all, "more") || !strings.Contains(all, "logs/gw-a.ndjson:111\n") {
		t.Errorf("PerRule and Records -1 do not show everything:\n%s", all)
	}
}

func TestTextEmpty(t *testing.T) {
	r := empty()
	r.Dataset, r.Sources = "", []string{"-"}
	out := textOf(t, r, TextOptions{})
	for _, want := range []string{
		"checked:  5 devices, 40 records from stdin; 1 line rejected at ingest\n",
		"policy:   none declared, none inferred from the log\n",
		"findings: none (3 rules)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "rule  ") || strings.Contains(out, "notes:") {
		t.Errorf("empty report has a table or notes:\n%s", out)
	}
}

func TestPolicyText(t *testing.T) {
	p := fixture().Summary.Policy.Policy
	for _, tt := range []struct {
		in   analyze.PolicyInfo
		want string
	}{
		{analyze.PolicyInfo{Source: "none"}, "none declared, none inferred from the log"},
		{analyze.PolicyInfo{Source: "declared", Name: "fleet.toml", Policy: p}, "declared fleet.toml: delay full_jitter, "},
		{analyze.PolicyInfo{Source: "inferred", Policy: p, Inferred: []string{"base_delay_s", "multiplier"}},
			"inferred from the log (base_delay_s, multiplier): delay full_jitter, "},
	} {
		if got := policyText(tt.in); !strings.HasPrefix(got, tt.want) {
			t.Errorf("policyText(%s) = %q, want %q...", tt.in.Source, got, tt.want)
		}
	}
}

func TestWrapList(t *testing.T) {
	items := []string{"audit-gap", "auth-backoff", "client-id-churn", "clock-anomaly", "connect-budget"}
	for _, tt := range []struct {
		width int
		want  string
	}{
		{100, "  none: audit-gap, auth-backoff, client-id-churn, clock-anomaly, connect-budget"},
		{40, "  none: audit-gap, auth-backoff,\n        client-id-churn, clock-anomaly,\n        connect-budget"},
		{10, "  none: audit-gap,\n        auth-backoff,\n        client-id-churn,\n        clock-anomaly,\n        connect-budget"},
	} {
		if got := wrapList("  none: ", items, tt.width); got != tt.want {
			t.Errorf("width %d:\ngot\n%s\nwant\n%s", tt.width, got, tt.want)
		}
	}
}

// TestEstimatesSaid gives the fleet and its incident more times to
// recover than analyze.ExactDurations, so that their percentiles are
// estimates, and requires every output that prints them to say so: the
// text's incident, recovery and service lines, the verdict, and JSON's
// ttr_relative_error for the fleet and the incident and
// tts_relative_error for its service.
func TestEstimatesSaid(t *testing.T) {
	r := fixture()
	xs := make([]time.Duration, analyze.ExactDurations+10)
	for i := range xs {
		xs[i] = time.Duration(i) * time.Millisecond
	}
	st := r.Summary.Fleet
	st.TTR = analyze.DurationsOf(xs...)
	st.Incidents[0].TTR = analyze.DurationsOf(xs...)
	st.Incidents[0].TTS = analyze.DurationsOf(xs...)
	if st.TTR.Exact() {
		t.Fatal("the times are exact: the test tests nothing")
	}
	out := textOf(t, r, TextOptions{})
	incident := fmt.Sprintf("(p50 to p99 are estimates from %d times to recover: each percentile within ±0.1%%; max exact)", len(xs))
	fleet := fmt.Sprintf("(p50 to p99 and fairness are estimates from %d times to recover", len(xs))
	if n := strings.Count(out, incident); n != 3 { // the verdict, the incident's line and its service line
		t.Errorf("the incident's estimate said %d times, want 3 (the verdict, the incident and its service):\n%s", n, out)
	}
	if !strings.Contains(out, fleet) {
		t.Errorf("the fleet's estimate not said:\n%s", out)
	}
	if service := fmt.Sprintf("(p50 to p90 are estimates from %d times to first useful service", len(xs)); !strings.Contains(out, service) {
		t.Errorf("the estimate of the times to first service not said:\n%s", out)
	}
	var b bytes.Buffer
	if err := JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), `"ttr_relative_error": 0.001`); n != 2 {
		t.Errorf("ttr_relative_error %d times in the JSON, want 2 (the fleet and the incident)", n)
	}
	if n := strings.Count(b.String(), `"tts_relative_error": 0.001`); n != 1 {
		t.Errorf("tts_relative_error %d times in the JSON, want 1", n)
	}
}
