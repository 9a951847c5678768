package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/analyze"
)

// TestRulesLists: rules lists exactly the catalogue (analyze.Rules), in
// its order, in text and in JSON, each with the severity, summary, needs
// and thresholds the rule itself gives.
func TestRulesLists(t *testing.T) {
	var want []string
	for _, r := range analyze.Rules() {
		want = append(want, r.Info().ID)
	}
	code, out, stderr := runArgs(t, "rules")
	if code != 0 || stderr != "" {
		t.Fatalf("rules: exit %d, stderr %q", code, stderr)
	}
	var got []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(line, " ") && slices.Contains([]string{"error", "warning", "info"}, f[min(1, len(f)-1)]) {
			got = append(got, f[0])
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules lists\n  %v\nthe catalogue is\n  %v\n%s", got, want, out)
	}

	code, out, stderr = runArgs(t, "rules", "--format", "json")
	if code != 0 || stderr != "" {
		t.Fatalf("rules --format json: exit %d, stderr %q", code, stderr)
	}
	var entries []map[string]any
	if err := json.Unmarshal(out, &entries); err != nil {
		t.Fatalf("rules --format json: %v\n%s", err, out)
	}
	got = nil
	fields := []string{"id", "enabled", "severity", "default_severity", "summary", "needs_policy_keys", "needs_broker_log", "uses_policy_keys", "thresholds"}
	for i, e := range entries {
		id, _ := e["id"].(string)
		got = append(got, id)
		for _, f := range fields {
			if v, ok := e[f]; !ok || v == nil {
				t.Errorf("%s: no %s", id, f)
			}
		}
		if len(e) != len(fields) {
			t.Errorf("%s: fields %v, want %v", id, e, fields)
		}
		if i >= len(want) {
			continue
		}
		r := analyze.Rules()[i]
		info := r.Info()
		if e["severity"] != info.Severity.String() || e["summary"] != info.Title || e["needs_broker_log"] != info.NeedsBrokerLog {
			t.Errorf("%s: %v, want the rule's info %+v", id, e, info)
		}
		var ths []analyze.Threshold
		if tu, ok := r.(analyze.Tunable); ok {
			ths = tu.Thresholds()
		}
		if got := e["thresholds"].([]any); len(got) != len(ths) {
			t.Errorf("%s: %d thresholds, want %d", id, len(got), len(ths))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules --format json lists\n  %v\nthe catalogue is\n  %v", got, want)
	}

	// as a stormaudit.toml sets them
	conf := filepath.Join(t.TempDir(), "stormaudit.toml")
	if err := os.WriteFile(conf, []byte("[rules]\ndisable = [\"backlog\"]\n[severity]\nspacing = \"error\"\n[rules.resync]\ngroup = 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runArgs(t, "--config", conf, "rules", "--format", "json")
	entries = nil
	if err := json.Unmarshal(out, &entries); code != 0 || err != nil {
		t.Fatalf("rules with a configuration: exit %d, %v", code, err)
	}
	for _, e := range entries {
		switch e["id"] {
		case "backlog":
			if e["enabled"] != false {
				t.Errorf("backlog: enabled %v under a configuration that disables it", e["enabled"])
			}
		case "spacing":
			if e["severity"] != "error" || e["default_severity"] != "warning" {
				t.Errorf("spacing: severity %v, default %v", e["severity"], e["default_severity"])
			}
		case "resync":
			if th := e["thresholds"].([]any)[1].(map[string]any); th["name"] != "group" || th["value"] != 5.0 || th["default"] != 3.0 {
				t.Errorf("resync's group: %v", th)
			}
		}
	}
	code, text, _ := runArgs(t, "--config", conf, "rules")
	if code != 0 || !strings.Contains(string(text), "(disabled by the configuration)") || !strings.Contains(string(text), "group = 5 by the configuration (default 3)") {
		t.Errorf("rules with a configuration, in text:\n%s", text)
	}

	if code, _, stderr := runArgs(t, "rules", "--format", "yaml"); code != 2 || !strings.Contains(stderr, "expected text or json") {
		t.Errorf("--format yaml: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runArgs(t, "rules", "resync"); code != 2 || !strings.Contains(stderr, "expected no arguments") {
		t.Errorf("an argument: exit %d, %q", code, stderr)
	}
}

// TestConfigErrorsPointToRules: a stormaudit.toml that names a rule or
// a threshold that does not exist is refused with a pointer to
// stormaudit rules, which lists them.
func TestConfigErrorsPointToRules(t *testing.T) {
	for _, doc := range []string{
		"[rules]\ndisable = [\"resynk\"]\n",
		"[severity]\nspacin = \"error\"\n",
		"[rules.resynk]\ngroup = 4\n",
		"[rules.resync]\ngrop = 4\n",
		"[rules.spacing]\nmin_s = 1\n",
	} {
		path := filepath.Join(t.TempDir(), "stormaudit.toml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runArgs(t, "--config", path, "config", "show")
		if code != 2 || !strings.Contains(stderr, "stormaudit rules") {
			t.Errorf("%q: exit %d, %q; want 2 and a pointer to stormaudit rules", doc, code, stderr)
		}
	}
}
