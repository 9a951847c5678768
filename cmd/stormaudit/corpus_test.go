package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/internal/realcorpus"
)

// corpusDir holds the real-client corpus (docs/corpus.md).
const corpusDir = "../../testdata/realclients"

// The tolerances check is held to against the broker's log
// (docs/corpus.md).
const (
	lossTolerance    = time.Second     // lost_at after the broker's death
	connectTolerance = time.Second     // first_connect_at against the broker's first accepted reconnect
	ttrTolerance     = 2 * time.Second // each recovery percentile
)

// corpusDoc is what the test reads of check's JSON.
type corpusDoc struct {
	Findings []struct {
		Rule, Device string
	}
	Summary struct {
		Fleet struct {
			Incidents []struct {
				LostAt         time.Time `json:"lost_at"`
				DevicesLost    int       `json:"devices_lost"`
				LossInferred   bool      `json:"loss_inferred"`
				FirstConnectAt time.Time `json:"first_connect_at"`
				Recovered      int
				TTR50S         float64 `json:"ttr_p50_s"`
				TTR90S         float64 `json:"ttr_p90_s"`
				TTRMaxS        float64 `json:"ttr_max_s"`
				ConnectsPeak   int     `json:"connects_peak_per_s"`
			}
		}
	}
}

// TestRealClientCorpus checks what check says of each outage of the
// real-client corpus against the broker's own log: when the broker died,
// when the devices came back, how long they took and how hard they hit
// it, and which rules fire. Each log is checked raw and as a dataset,
// against its declared policy and the inferred one, in every format.
func TestRealClientCorpus(t *testing.T) {
	logs, _ := filepath.Glob(filepath.Join(corpusDir, "*", realcorpus.BrokerLog))
	if len(logs) < 3 {
		t.Fatalf("the corpus in %s has %d scenarios, want 3 or more", corpusDir, len(logs))
	}
	for _, blog := range logs {
		dir := filepath.Dir(blog)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			truth, meta := readCorpus(t, dir)
			clients, pol := filepath.Join(dir, realcorpus.ClientLog), filepath.Join(dir, realcorpus.PolicyFile)
			ds := filepath.Join(t.TempDir(), "ds")
			if code, _, stderr := runArgs(t, "ingest", "-q", "-o", ds, clients); code != 0 {
				t.Fatalf("ingest: exit %d: %s", code, stderr)
			}
			for _, tc := range []struct {
				name string
				args []string
			}{
				{"raw-declared", []string{"--policy", pol, clients}},
				{"raw-inferred", []string{clients}},
				{"dataset-declared", []string{"--policy", pol, ds}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					out := t.TempDir()
					args := append([]string{"check", "--fail-on", "none", "--format", "json,text,sarif,junit,github",
						"--output", "-," + filepath.Join(out, "text") + "," + filepath.Join(out, "sarif") + "," +
							filepath.Join(out, "junit") + "," + filepath.Join(out, "github")}, tc.args...)
					code, stdout, stderr := runArgs(t, args...)
					if code != 0 {
						t.Fatalf("check: exit %d: %s", code, stderr)
					}
					var doc corpusDoc
					if err := json.Unmarshal(stdout, &doc); err != nil {
						t.Fatal(err)
					}
					compareIncident(t, &doc, truth)
					compareRules(t, &doc, truth, meta)
					compareFormats(t, &doc, out)
				})
			}
		})
	}
}

func readCorpus(t *testing.T, dir string) (*realcorpus.Truth, realcorpus.Meta) {
	f, err := os.Open(filepath.Join(dir, realcorpus.BrokerLog))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	truth, err := realcorpus.ParseBrokerLog(f)
	if err != nil {
		t.Fatal(err)
	}
	var meta realcorpus.Meta
	b, err := os.ReadFile(filepath.Join(dir, realcorpus.MetaFile))
	if err == nil {
		err = json.Unmarshal(b, &meta)
	}
	if err != nil {
		t.Fatal(err)
	}
	return truth, meta
}

func runArgs(t *testing.T, args ...string) (int, []byte, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"stormaudit"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.Bytes(), stderr.String()
}

// compareIncident holds check's incident to the broker's log.
func compareIncident(t *testing.T, doc *corpusDoc, truth *realcorpus.Truth) {
	incs := doc.Summary.Fleet.Incidents
	if len(incs) != 1 {
		t.Fatalf("%d incidents, want 1: %+v", len(incs), incs)
	}
	in := incs[0]
	if d := in.LostAt.Sub(truth.Died); d < 0 || d > lossTolerance {
		t.Errorf("lost_at %v is %v after the broker's death at %v, want within [0, %v]", in.LostAt, d, truth.Died, lossTolerance)
	}
	if in.DevicesLost != truth.Lost {
		t.Errorf("devices_lost %d, the broker had %d clients connected when it died", in.DevicesLost, truth.Lost)
	}
	var firstBack time.Time
	for _, at := range truth.Reconnected {
		if firstBack.IsZero() || at.Before(firstBack) {
			firstBack = at
		}
	}
	if d := in.FirstConnectAt.Sub(firstBack).Abs(); d > connectTolerance {
		t.Errorf("first_connect_at %v, the broker accepted the first reconnect at %v (%v apart)", in.FirstConnectAt, firstBack, d)
	}
	if in.Recovered != len(truth.Reconnected) {
		t.Errorf("recovered %d, the broker accepted %d of the lost clients again", in.Recovered, len(truth.Reconnected))
	}
	ttr := truth.TTR()
	peak, _ := truth.PeakPerSecond()
	t.Logf("check: lost at %s, %d lost, first connect %s, %d recovered, TTR p50 %.3fs p90 %.3fs max %.3fs, connects peak %d/s",
		in.LostAt.Format(time.RFC3339Nano), in.DevicesLost, in.FirstConnectAt.Format(time.RFC3339Nano), in.Recovered, in.TTR50S, in.TTR90S, in.TTRMaxS, in.ConnectsPeak)
	t.Logf("broker: died %s, %d lost, first reconnect %s, %d back, TTR p50 %v p90 %v max %v, connects peak %d/s",
		truth.Died.Format(time.RFC3339Nano), truth.Lost, firstBack.Format(time.RFC3339Nano), len(truth.Reconnected),
		realcorpus.Rank(ttr, 0.5), realcorpus.Rank(ttr, 0.9), realcorpus.Rank(ttr, 1), peak)
	for _, p := range []struct {
		name string
		got  float64
		q    float64
	}{{"p50", in.TTR50S, 0.5}, {"p90", in.TTR90S, 0.9}, {"max", in.TTRMaxS, 1}} {
		want := realcorpus.Rank(ttr, p.q)
		if d := (time.Duration(p.got*1e9) - want).Abs(); d > ttrTolerance {
			t.Errorf("time to recover %s %.3fs, the broker's log says %v (%v apart)", p.name, p.got, want, d)
		}
	}
	if d := abs(in.ConnectsPeak - peak); d > max(2, peak/10) {
		t.Errorf("connects_peak_per_s %d, the broker accepted at most %d in a second", in.ConnectsPeak, peak)
	}
}

// compareRules checks which rules fire: recovery-storm and
// unscheduled-connect where the library reconnects in phase beside the
// manager, reconnect-while-connected on exactly the devices the broker
// saw reconnect while the fleet was up, and nothing else.
func compareRules(t *testing.T, doc *corpusDoc, truth *realcorpus.Truth, meta realcorpus.Meta) {
	devices := map[string][]string{}
	for _, f := range doc.Findings {
		devices[f.Rule] = append(devices[f.Rule], f.Device)
	}
	library := meta.Mode == "library"
	if got := len(devices["recovery-storm"]) > 0; got != library {
		t.Errorf("recovery-storm fired %v, want %v (library reconnect: %v)", got, library, library)
	}
	if n := len(devices["unscheduled-connect"]); library && n < meta.Devices/2 || !library && n > 0 {
		t.Errorf("unscheduled-connect on %d of %d devices (library reconnect: %v)", n, meta.Devices, library)
	}
	var churners []string
	if !library {
		for id, n := range truth.PerClient {
			if n > 1 {
				churners = append(churners, id)
			}
		}
	}
	slices.Sort(churners)
	got := devices["reconnect-while-connected"]
	slices.Sort(got)
	if !slices.Equal(got, churners) {
		t.Errorf("reconnect-while-connected on %v; the broker saw %v reconnect while the fleet was up", got, churners)
	}
	for rule, ids := range devices {
		if rule != "recovery-storm" && rule != "unscheduled-connect" && rule != "reconnect-while-connected" {
			t.Errorf("%s fired on %d devices (%v ...)", rule, len(ids), ids[0])
		}
	}
}

// compareFormats checks that the other formats carry what the JSON does.
func compareFormats(t *testing.T, doc *corpusDoc, out string) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if text := read("text"); !strings.HasPrefix(text, "incident: ") {
		t.Errorf("the text does not open with the incident:\n%.300s", text)
	}
	sarif, junit, github := read("sarif"), read("junit"), read("github")
	for _, f := range doc.Findings {
		if !strings.Contains(sarif, `"ruleId":"`+f.Rule+`"`) || !strings.Contains(junit, f.Rule) || !strings.Contains(github, f.Rule) {
			t.Errorf("a %s finding is missing from SARIF, JUnit or the GitHub annotations", f.Rule)
		}
	}
}

func abs(x int) int { return max(x, -x) }
