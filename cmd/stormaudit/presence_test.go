package main

import (
	"encoding/json"
	"html"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPresenceEveryOutput: the real recording with wills and status
// publishes (testdata/realclients/paho-py-presence) checked with its
// broker's log: each incident's presence is in JSON, and the text, SARIF
// and the HTML report say it.
func TestPresenceEveryOutput(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "realclients", "paho-py-presence")
	args := []string{"--no-config", "check", "--fail-on", "none", "--policy", filepath.Join(dir, "policy.toml"),
		"--broker-log", filepath.Join(dir, "broker.log"), filepath.Join(dir, "clients.ndjson")}
	_, out, stderr := runArgs(t, append(args, "--format", "json")...)
	doc := presenceDoc(t, out, stderr)
	incs := doc.Summary.Fleet.Incidents
	if len(incs) != 2 || incs[0].Broker.Presence == nil || incs[1].Broker.Presence == nil {
		t.Fatalf("incidents %+v, want two with presence", incs)
	}
	if p := incs[0].Broker.Presence; p.Devices != 200 || p.Wills != 200 {
		t.Errorf("the silent link: %+v, want 200 devices with a will, every will sent", p)
	}
	if p := incs[1].Broker.Presence; p.Devices != 200 || p.Wills != 0 || p.P50 <= 0 {
		t.Errorf("the kill: %+v, want 200 devices shown online until they came back, no will", p)
	}
	_, text, _ := runArgs(t, args...)
	if n := strings.Count(string(text), "presence: 200 devices declared a will"); n != 2 || !strings.Contains(string(text), "shown online while down p50") {
		t.Errorf("the text says presence %d times, want 2, and in the verdict:\n%s", n, text)
	}
	_, sarif, _ := runArgs(t, append(args, "--format", "sarif")...)
	if !strings.Contains(string(sarif), `"devices_with_will": 200`) {
		t.Error("SARIF's incidentDiagnoses say no presence")
	}
	page := filepath.Join(t.TempDir(), "report.html")
	rargs := append([]string{"--no-config", "report", "-o", page}, args[4:]...)
	if code, _, stderr := runArgs(t, rargs...); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(html.UnescapeString(string(b)), "Presence: 200 devices declared a will"); n != 2 {
		t.Errorf("the HTML report says presence %d times, want 2", n)
	}
	if n := strings.Count(string(b), "Shown online while down, the longest"); n != 2 || !strings.Contains(string(b), "(back)</td>") {
		t.Errorf("the HTML report lists the devices shown online longest %d times, want 2, each with how it ended", n)
	}
}

// TestSimulatedPresence: simulate writes the broker's log beside the
// records, every device declaring a will and saying online on each
// connect. The broker dies at the drop and sends no will, so check finds
// every device shown online until it came back: presence's percentiles
// are the times to recover, to the log's 1 s stamps, and the rule flags
// them beyond twice the keepalive.
func TestSimulatedPresence(t *testing.T) {
	dir := t.TempDir()
	log, blog := filepath.Join(dir, "fleet.ndjson"), filepath.Join(dir, "broker.log")
	if code, _, stderr := runArgs(t, "--no-config", "simulate", "-n", "200", "--outage", "2m", "--broker-log", blog, "-o", log); code != 0 {
		t.Fatalf("simulate: exit %d\n%s", code, stderr)
	}
	_, out, stderr := runArgs(t, "--no-config", "check", "--fail-on", "none", "--format", "json", "--broker-log", blog, log)
	doc := presenceDoc(t, out, stderr)
	incs := doc.Summary.Fleet.Incidents
	if len(incs) != 1 || incs[0].Broker.Presence == nil {
		t.Fatalf("incidents %+v, want one with presence\n%s", incs, stderr)
	}
	in, p := incs[0], incs[0].Broker.Presence
	if p.Devices != 200 || p.Back != 200 || math.Abs(p.P50-in.TTR50) > 1 || math.Abs(p.Max-in.TTRMax) > 1 {
		t.Errorf("presence %+v; times to recover p50 %gs, max %gs: want every device shown online until it came back", p, in.TTR50, in.TTRMax)
	}
	if doc.Summary.ByRule["presence"] != 1 {
		t.Errorf("presence flagged %d, want 1: shown online p50 %gs, beyond twice the 45 s keepalive", doc.Summary.ByRule["presence"], p.P50)
	}
}

// TestSimulateBrokerLogNotOutput: the broker's log and the records cannot
// go to one file, whether it exists yet or not.
func TestSimulateBrokerLogNotOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	for range 2 {
		code, _, stderr := runArgs(t, "--no-config", "simulate", "-n", "3", "--broker-log", path, "-o", path)
		if code != 2 || !strings.Contains(stderr, "is --output too") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		os.WriteFile(path, nil, 0o644) // the second time, it exists
	}
}

// presenceJSON is what the presence tests read of check's JSON.
type presenceJSON struct {
	Summary struct {
		ByRule map[string]int `json:"by_rule"`
		Fleet  struct {
			Incidents []struct {
				TTR50  float64 `json:"ttr_p50_s"`
				TTRMax float64 `json:"ttr_max_s"`
				Broker struct {
					Presence *struct {
						Devices int     `json:"devices_with_will"`
						Wills   int     `json:"wills_sent"`
						Back    int     `json:"back_first"`
						P50     float64 `json:"online_while_down_p50_s"`
						Max     float64 `json:"online_while_down_max_s"`
					} `json:"presence"`
				} `json:"broker"`
			} `json:"incidents"`
		} `json:"fleet"`
	} `json:"summary"`
}

// presenceDoc decodes check's JSON out (stderr said alongside).
func presenceDoc(t *testing.T, out []byte, stderr string) *presenceJSON {
	t.Helper()
	var doc presenceJSON
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	return &doc
}
