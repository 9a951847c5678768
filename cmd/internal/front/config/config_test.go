package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stormaudit/stormaudit/analyze"
)

func TestParse(t *testing.T) {
	c, err := Parse("/repo/stormaudit.toml", []byte(`# a fleet's checks
policy = "policies/fleet.toml"

[rules]
disable = ["session-settings", "audit-gap"]

[severity]
spacing = "error"
hot-loop = "info"

[check]
format = "text,sarif"
max-results = 100
fail-on = "warning"
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy != "/repo/policies/fleet.toml" {
		t.Errorf("policy %q: a path is relative to the file", c.Policy)
	}
	if !slices.Equal(c.Disabled, []string{"session-settings", "audit-gap"}) || c.Enabled != nil {
		t.Errorf("rules: disabled %v, enabled %v", c.Disabled, c.Enabled)
	}
	if c.Severity["spacing"] != analyze.Error || c.Severity["hot-loop"] != analyze.Info || len(c.Severity) != 2 {
		t.Errorf("severity %v", c.Severity)
	}
	want := []Setting{{"format", "text,sarif", 12}, {"max-results", "100", 13}, {"fail-on", "warning", 14}}
	if !slices.Equal(c.Check, want) {
		t.Errorf("check %v, want %v", c.Check, want)
	}
	if c, err := Parse("x.toml", []byte(`policy = "fixed"`)); err != nil || c.Policy != "fixed" {
		t.Errorf("a preset: %+v, %v", c, err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"polcy = \"fixed\"", "s.toml:1: polcy: expected one of policy, rules, severity, check, found an unknown key (did you mean policy?)"},
		{"\n[severity]\nspacing = \"critical\"", "s.toml:3: severity.spacing: expected error, warning or info, found the string \"critical\""},
		{"[severity]\nspacin = \"error\"", "s.toml:2: severity.spacin: expected a rule id (stormaudit rules lists them; docs/rules.md defines them), found the rule \"spacin\" (did you mean spacing?)"},
		{"[rules]\ndisable = \"resync\"", "s.toml:2: rules.disable: expected an array of rule ids, found the string \"resync\""},
		{"[rules]\nenable = [\"resync\"]\ndisable = [\"spacing\"]", "s.toml:2: rules.enable: expected enable or disable, not both, found both"},
		{"[rules]\nskip = []", "s.toml:2: rules.skip: expected one of enable, disable, or a table [rules.ID] of a rule's thresholds, found an unknown key"},
		{"[check]\nformat = [\"json\"]", "s.toml:2: check.format: expected a string, an integer or true or false, found an array"},
		{"severity = 3", "s.toml:1: severity: expected a table, found the number 3"},
		{"policy = ", "s.toml:1: expected TOML, found unexpected EOF; expected value"},
	} {
		_, err := Parse("s.toml", []byte(c.doc))
		var e *Error
		if !errors.As(err, &e) || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.doc, err, c.want)
		}
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := Find(deep); err != nil || p != "" {
		t.Errorf("none: %q, %v", p, err)
	}
	os.WriteFile(filepath.Join(root, "a", FileName), nil, 0o644)
	if p, err := Find(deep); err != nil || p != filepath.Join(root, "a", FileName) {
		t.Errorf("above: %q, %v", p, err)
	}
	os.WriteFile(filepath.Join(deep, FileName), nil, 0o644)
	if p, _ := Find(deep); p != filepath.Join(deep, FileName) {
		t.Errorf("here: %q, the nearest wins", p)
	}
	// a repository's root ends the search: a file above it is not its own
	os.Remove(filepath.Join(deep, FileName))
	os.Mkdir(filepath.Join(root, "a", "b", ".git"), 0o755)
	if p, _ := Find(deep); p != "" {
		t.Errorf("above the repository's root: %q, want none", p)
	}
}

func TestParseThresholds(t *testing.T) {
	c, err := Parse("s.toml", []byte("[rules]\ndisable = [\"spacing\"]\n\n[rules.resync]\ngroup = 5\ntick_s = 0.05\n\n[rules.starvation]\nfloor_s = 300\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]float64{"resync": {"group": 5, "tick_s": 0.05}, "starvation": {"floor_s": 300}}
	if len(c.Thresholds) != 2 || c.Thresholds["resync"]["group"] != 5 || c.Thresholds["resync"]["tick_s"] != 0.05 || c.Thresholds["starvation"]["floor_s"] != 300 {
		t.Errorf("thresholds %v, want %v", c.Thresholds, want)
	}
	for _, c := range []struct{ doc, want string }{
		{"[rules.resync]\ngrop = 5", "s.toml:2: rules.resync.grop: expected a threshold of resync: one of tick_s, group, share, repeats (stormaudit rules lists them), found an unknown key (did you mean group?)"},
		{"[rules.resync]\ngroup = 1", "s.toml:2: rules.resync.group: expected a whole number from 2 to 1000000000, found the number 1"},
		{"[rules.resync]\ngroup = 2.5", "s.toml:2: rules.resync.group: expected a whole number from 2 to 1000000000, found the number 2.5"},
		{"[rules.resync]\nshare = \"half\"", "s.toml:2: rules.resync.share: expected a number, found the string \"half\""},
		{"[rules.resynk]\ngroup = 4", "s.toml:1: rules.resynk: expected a rule id (stormaudit rules lists them; docs/rules.md defines them), found the rule \"resynk\" (did you mean resync?)"},
	} {
		if _, err := Parse("s.toml", []byte(c.doc)); err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.doc, err, c.want)
		}
	}
}

// TestParseFineDetail: a comment after a table header keeps the lines of
// its keys; NaN is no threshold; paths are relative to the file.
func TestParseFineDetail(t *testing.T) {
	_, err := Parse("s.toml", []byte("[rules.resync]   # thresholds\ngrop = 5"))
	if err == nil || !strings.HasPrefix(err.Error(), "s.toml:2: rules.resync.grop:") {
		t.Errorf("after a commented header: %v", err)
	}
	if _, err := Parse("s.toml", []byte("[rules.resync]\ntick_s = nan")); err == nil {
		t.Error("tick_s = nan accepted")
	}
	c, err := Parse("/repo/ci/stormaudit.toml", []byte("policy = \"fleet.policy\"\n[check]\nbaseline = \"base.json\"\noutput = \"-, out/check.sarif\"\nbroker-log = \"logs/mosquitto.log\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Policy != "/repo/ci/fleet.policy" || c.Check[0].Value != "/repo/ci/base.json" || c.Check[2].Value != "/repo/ci/logs/mosquitto.log" ||
		c.Check[1].Value != "-,/repo/ci/out/check.sarif" {
		t.Errorf("paths not relative to the file: %q, %+v", c.Policy, c.Check)
	}
}
