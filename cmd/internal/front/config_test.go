package front

import (
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/cmd/internal/front/config"
)

// flagMap is a driver's flags as a map: set are those the command line
// set; refused are keys it does not take.
type flagMap struct {
	values  map[string]string
	set     map[string]bool
	refused map[string]bool
}

func (f *flagMap) Has(name string) bool { _, ok := f.values[name]; return ok }
func (f *flagMap) IsSet(name string) bool {
	return f.set[name] && f.values[name] != ""
}
func (f *flagMap) Set(name, value string) error {
	if f.refused[name] {
		return &NotTakenError{Why: "this driver takes no " + name}
	}
	if _, ok := f.values[name]; !ok {
		return nil // ignored
	}
	if name == "per-rule" {
		if _, err := strconv.Atoi(value); err != nil {
			return err
		}
	}
	f.values[name] = value
	return nil
}
func (f *flagMap) Kind(name string) string {
	if name == "per-rule" {
		return KindOf(0)
	}
	return KindOf("")
}

func parse(t *testing.T, toml string) *config.Config {
	t.Helper()
	c, err := config.Parse("stormaudit.toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestApplyConfig(t *testing.T) {
	const file = `policy = "full-jitter"
[check]
format = "text,sarif"
output = "-,check.sarif"
fail-on = "warning"
annotations = 5
`
	for _, tt := range []struct {
		name  string
		given map[string]string // on the command line
		want  map[string]string
	}{
		{"the file", nil,
			map[string]string{"policy": "full-jitter", "format": "text,sarif", "output": "-,check.sarif", "fail-on": "warning"}},
		{"the command line wins", map[string]string{"policy": "fixed", "fail-on": "none"},
			map[string]string{"policy": "fixed", "format": "text,sarif", "output": "-,check.sarif", "fail-on": "none"}},
		{"an empty string sets nothing", map[string]string{"fail-on": ""},
			map[string]string{"policy": "full-jitter", "format": "text,sarif", "output": "-,check.sarif", "fail-on": "warning"}},
		{"a format drops the file's outputs", map[string]string{"format": "json"},
			map[string]string{"policy": "full-jitter", "format": "json", "output": "", "fail-on": "warning"}},
	} {
		fs := &flagMap{values: map[string]string{"policy": "", "format": "", "output": "", "fail-on": ""}, set: map[string]bool{}}
		for k, v := range tt.given {
			fs.values[k], fs.set[k] = v, true
		}
		if err := ApplyConfig(parse(t, file), fs, true); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !maps.Equal(fs.values, tt.want) {
			t.Errorf("%s: flags %v, want %v", tt.name, fs.values, tt.want)
		}
	}
	// browse and report take the policy only
	fs := &flagMap{values: map[string]string{"policy": "", "format": ""}, set: map[string]bool{}}
	if err := ApplyConfig(parse(t, file), fs, false); err != nil || fs.values["policy"] != "full-jitter" || fs.values["format"] != "" {
		t.Errorf("without the table: %v, %v", fs.values, err)
	}
}

func TestApplyConfigErrors(t *testing.T) {
	for _, tt := range []struct{ file, want string }{
		{"[check]\nfail_on = \"none\"\n", "config: stormaudit.toml:2: check.fail_on: expected a flag of check (format, output, fail-on, window, per-rule, annotations, max-rejects, baseline, max-results, broker-log, broker-log-format, broker-log-tz), found an unknown key (did you mean fail-on?)"},
		{"[check]\nper-rule = \"many\"\n", `config: stormaudit.toml:2: check.per-rule: expected an integer, found "many"`},
		{"[check]\n\nbaseline = \"b.json\"\n", "config: stormaudit.toml:3: check.baseline: this driver takes no baseline"},
	} {
		fs := &flagMap{values: map[string]string{"per-rule": "3"}, refused: map[string]bool{"baseline": true}}
		err := ApplyConfig(parse(t, tt.file), fs, true)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%q: %v, want %s", tt.file, err, tt.want)
		}
	}
}

func TestOptions(t *testing.T) {
	c := parse(t, `[rules]
enable = ["resync", "spacing"]
[rules.resync]
group = 4
[severity]
spacing = "error"
`)
	opts, err := Options("check", c, "full-jitter", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Disabled["resync"] || opts.Disabled["spacing"] || !opts.Disabled["delay-bounds"] {
		t.Errorf("disabled %v: want all but resync and spacing", opts.Disabled)
	}
	if opts.Severity["spacing"] != analyze.Error || opts.Thresholds["resync"]["group"] != 4 {
		t.Errorf("severity %v, thresholds %v", opts.Severity, opts.Thresholds)
	}
	if opts.Policy == nil || opts.PolicyName != "full-jitter" || opts.Window != 2*time.Second {
		t.Errorf("policy %v %q, window %v", opts.Policy, opts.PolicyName, opts.Window)
	}
	if _, err := Options("browse", c, "", 0); err == nil || err.Error() != "browse: --window: expected a duration > 0, found 0s" {
		t.Errorf("window 0: %v", err)
	}
	if _, err := Options("check", c, "nope", time.Second); err == nil || !strings.HasPrefix(err.Error(), "check: --policy: nope: ") {
		t.Errorf("--policy nope: %v", err)
	}
}

// TestLoadConfig: found from the working directory up to the
// repository's root, named by --config, or none with --no-config.
func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	found := filepath.Join(dir, "stormaudit.toml")
	other := filepath.Join(dir, "other.toml")
	for path, text := range map[string]string{found: "[rules]\ndisable = [\"resync\"]\n", other: "[rules]\ndisable = [\"spacing\"]\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(sub)
	for _, tt := range []struct {
		path     string
		noConfig bool
		want     string
	}{{"", false, found}, {other, false, other}, {"", true, ""}} {
		c, err := LoadConfig(tt.path, tt.noConfig)
		if err != nil || c.Path != tt.want {
			t.Errorf("LoadConfig(%q, %v): %v, %v; want %s", tt.path, tt.noConfig, c, err, tt.want)
		}
		if p := ConfigPath(tt.path, tt.noConfig); p != tt.want {
			t.Errorf("ConfigPath(%q, %v) = %q, want %q", tt.path, tt.noConfig, p, tt.want)
		}
	}
	if _, err := LoadConfig(filepath.Join(dir, "none.toml"), false); err == nil || err.Error()[:8] != "config: " {
		t.Errorf("a missing --config: %v", err)
	}
}
