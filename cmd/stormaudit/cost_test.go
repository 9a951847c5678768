package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutageCostEveryOutput: a simulated fleet whose outboxes fill and
// whose queued commands expire. The incident's cost in JSON is what the
// devices' own counts in the log add up to, and the text, SARIF, the HTML
// report and the browser's incident line say the same numbers.
func TestOutageCostEveryOutput(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(pol, []byte("delay = \"full_jitter\"\nbase_delay_s = 1\nmax_delay_s = 120\nmultiplier = 2\noutbox_limit = 30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "fleet.ndjson")
	if code, _, stderr := runArgs(t, "--no-config", "simulate", "-n", "200", "--outage", "2m", "--policy", pol, "--outbox-rate", "1",
		"--commands-rate", "0.5", "--command-ttl", "60s", "-o", log); code != 0 {
		t.Fatalf("simulate: exit %d\n%s", code, stderr)
	}
	want := sumFields(t, log, "outbox_dropped", "inbound_expired")
	if want["outbox_dropped"] == 0 || want["inbound_expired"] == 0 {
		t.Fatalf("the simulated log counts %v: nothing to weigh", want)
	}

	_, out, _ := runArgs(t, "--no-config", "check", "--fail-on", "none", "--format", "json", log)
	var doc struct {
		Summary struct {
			Fleet struct {
				Incidents []struct {
					Cost map[string]struct {
						Messages  int64 `json:"messages"`
						Devices   int   `json:"devices"`
						Reporting int   `json:"devices_reporting"`
					} `json:"cost"`
				} `json:"incidents"`
			} `json:"fleet"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	incs := doc.Summary.Fleet.Incidents
	if len(incs) != 1 {
		t.Fatalf("%d incidents, want 1", len(incs))
	}
	for f, n := range want {
		if c := incs[0].Cost[f]; c.Messages != n || c.Devices != 200 || c.Reporting != 200 {
			t.Errorf("cost %s %+v, want %d messages from all 200 devices (the log's own sum)", f, c, n)
		}
	}
	if _, ok := incs[0].Cost["inbound_duplicates"]; ok {
		t.Error("inbound_duplicates weighed, and no record carries it")
	}

	drop, exp := fmt.Sprint(want["outbox_dropped"]), fmt.Sprint(want["inbound_expired"])
	_, text, _ := runArgs(t, "--no-config", "check", "--fail-on", "none", log)
	if !strings.Contains(string(text), "cost: "+drop+" measurements dropped") || !strings.Contains(string(text), exp+" queued commands that came expired") {
		t.Errorf("the text says no cost of %s dropped and %s expired:\n%s", drop, exp, text)
	}
	_, sarif, _ := runArgs(t, "--no-config", "check", "--fail-on", "none", "--format", "sarif", log)
	var run struct {
		Runs []struct {
			Properties struct {
				Diagnoses []struct {
					Cost map[string]struct{ Messages int64 } `json:"cost"`
				} `json:"incidentDiagnoses"`
			} `json:"properties"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(sarif, &run); err != nil {
		t.Fatal(err)
	}
	if ds := run.Runs[0].Properties.Diagnoses; len(ds) != 1 || ds[0].Cost["outbox_dropped"].Messages != want["outbox_dropped"] ||
		ds[0].Cost["inbound_expired"].Messages != want["inbound_expired"] {
		t.Errorf("SARIF incidentDiagnoses %+v, want the cost %v", ds, want)
	}
	page := filepath.Join(dir, "report.html")
	if code, _, stderr := runArgs(t, "--no-config", "report", "-o", page, log); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, cell := range []string{"<td>" + drop + "</td>", "<td>" + exp + "</td>", "What the outage cost"} {
		if !strings.Contains(html.UnescapeString(string(b)), cell) {
			t.Errorf("the HTML report has no %q", cell)
		}
	}
}

// sumFields sums each named integer member over the lines of an NDJSON log.
func sumFields(t *testing.T, path string, fields ...string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		for _, name := range fields {
			if v, ok := m[name].(float64); ok {
				sum[name] += int64(v)
			}
		}
	}
	return sum
}
