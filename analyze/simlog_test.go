package analyze

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/policy"
	"github.com/stormaudit/stormaudit/simulate"
)

// Simulated logs for the tests: run simulate, read its lines, edit them,
// and check them.

// simLines runs simulate and returns its records, one line each.
func simLines(t *testing.T, cfg simulate.Config) []string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := simulate.Run(context.Background(), cfg, &buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	return lines[:len(lines)-1] // after the last newline: nothing
}

// simRecord is what these tests read of a simulated line.
type simRecord struct {
	ClientID   string `json:"client_id"`
	Outcome    string `json:"outcome"`
	RecordedAt string `json:"recorded_at"`
	Fail       string `json:"failure_class"`
}

func parseSim(t *testing.T, line string) simRecord {
	t.Helper()
	var r simRecord
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return r
}

// devicesOf returns the devices the findings of rule name, sorted.
func devicesOf(res *Result, rule string) []string {
	var ds []string
	for _, f := range of(res, rule) {
		ds = append(ds, f.Device)
	}
	slices.Sort(ds)
	return slices.Compact(ds)
}

// shiftStamp moves an RFC 3339 timestamp by d.
func shiftStamp(t *testing.T, s string, d time.Duration) string {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at.Add(d).UTC().Format("2006-01-02T15:04:05.999999-07:00")
}

// declaredPreset returns preset name as a policy file declares it, with the
// extra TOML lines.
func declaredPreset(t testing.TB, name, extra string) *policy.Policy {
	t.Helper()
	p := simPreset(t, name)
	return mustPolicy(t, string(p.AppendTOML(nil))+extra)
}

// simFindings simulates cfg and checks the log against pol, returning the
// findings of rule, the notes and simulate's figures.
func simFindings(t *testing.T, cfg simulate.Config, pol *policy.Policy, rule string) ([]Finding, simulate.Stats) {
	t.Helper()
	dir, st := simDataset(t, cfg)
	res, err := Check(dir, Options{Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	return of(res, rule), st
}

// simFindingsWith is simFindings with options.
func simFindingsWith(t *testing.T, cfg simulate.Config, opts Options, rule string) []Finding {
	t.Helper()
	dir, _ := simDataset(t, cfg)
	res, err := Check(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return of(res, rule)
}
