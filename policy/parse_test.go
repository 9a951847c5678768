package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fleetTOML = `# the reference fleet
name = "reference fleet"
delay = "full_jitter"
base_delay_s = 1
multiplier = 2
max_delay_s = 120
min_connect_spacing_s = 0.25
keepalive_s = 45
connect_budget_per_s = 200
clean_session = false
`

const fleetJSON = `{
  "name": "reference fleet",
  "delay": "full_jitter",
  "base_delay_s": 1,
  "multiplier": 2,
  "max_delay_s": 120.0,
  "min_connect_spacing_s": 0.25,
  "keepalive_s": 45,
  "connect_budget_per_s": 200,
  "clean_session": false
}
`

func TestParse(t *testing.T) {
	want := Policy{Name: "reference fleet", Delay: FullJitter, BaseDelayS: 1, Multiplier: 2, MaxDelayS: 120,
		MinConnectSpacingS: 0.25, KeepaliveS: 45, ConnectBudgetPerS: 200, ConnectBudgetWindowS: 1}
	for _, in := range []struct{ name, data string }{
		{"fleet.toml", fleetTOML},
		{"fleet.json", fleetJSON},
		{"fleet", fleetTOML},                 // TOML by content
		{"fleet.policy", fleetJSON},          // JSON by content
		{"fleet.TOML", "\uFEFF" + fleetTOML}, // a byte order mark is ignored
	} {
		p, err := Parse(in.name, []byte(in.data))
		if err != nil {
			t.Fatalf("%s: %v", in.name, err)
		}
		got := p
		got.declared = 0
		if got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", in.name, got, want)
		}
		for _, k := range []string{"name", "delay", "base_delay_s", "clean_session", "connect_budget_per_s"} {
			if !p.Declared(k) {
				t.Errorf("%s: Declared(%s) = false", in.name, k)
			}
		}
		for _, k := range []string{"connect_budget_window_s", "min_delay_s", "immediate_first_retry", "nosuch"} {
			if p.Declared(k) {
				t.Errorf("%s: Declared(%s) = true", in.name, k)
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	const exp = "delay = \"exponential\"\nbase_delay_s = 1\nmultiplier = 2\nmax_delay_s = 10\n"
	tests := []struct{ name, data, want string }{
		{"f.toml", "", "f.toml: expected a reconnect policy (at least the key delay), found an empty file"},
		{"f.toml", " \n\t\n", "f.toml: expected a reconnect policy (at least the key delay), found an empty file"},
		{"f.toml", "# only a comment\n", "f.toml: expected a reconnect policy (at least the key delay), found no keys"},
		{"f.json", "{}", "f.json: expected a reconnect policy (at least the key delay), found no keys"},
		{"f.toml", "delay = \"fixed\"\nbase_delay_s = 1\nmax_delay = 3\n", "f.toml:3: max_delay: expected one of the keys " + strings.Join(keyNames(), ", ") + ", found an unknown key (did you mean max_delay_s?)"},
		{"f.json", "{\"delay\": \"fixed\",\n \"Base-Delay\": 1}", "f.json:2: Base-Delay: expected one of the keys " + strings.Join(keyNames(), ", ") + ", found an unknown key (did you mean base_delay_s?)"},
		{"f.toml", "delay = \"fixed\"\nbase_delay_s = 1\n[extra]\nx = 1\n", "f.toml:3: extra: expected one of the keys " + strings.Join(keyNames(), ", ") + ", found an unknown key"},
		{"f.toml", "delay = \"fixed\"\nbase_delay_s = \"5\"\n", `f.toml:2: base_delay_s: expected a number, found a string "5"`},
		{"f.toml", "delay = \"fixed\"\nbase_delay_s = 5\nclean_session = 1\n", "f.toml:3: clean_session: expected true or false, found the number 1"},
		{"f.toml", "delay = \"fixed\"\nbase_delay_s = [5]\n", "f.toml:2: base_delay_s: expected a number, found an array"},
		{"f.toml", "delay = \"fixed\"\nbase_delay_s = 1979-05-27\n", "f.toml:2: base_delay_s: expected a number, found a date-time"},
		{"f.json", "{\"delay\": \"fixed\", \"base_delay_s\": null}", "f.json:1: base_delay_s: expected a number, found null"},
		{"f.json", "{\"delay\": \"fixed\", \"base_delay_s\": {}}", "f.json:1: base_delay_s: expected a number, found an object"},
		{"f.toml", "delay = 2\n", "f.toml:1: delay: expected a string, one of none, fixed, exponential, full_jitter, equal_jitter, decorrelated_jitter, found the number 2"},
		{"f.toml", "base_delay_s = 2\n", "f.toml: delay: expected one of none, fixed, exponential, full_jitter, equal_jitter, decorrelated_jitter, found nothing"},
		{"f.toml", "delay = \"linear\"\n", `f.toml:1: delay: expected one of none, fixed, exponential, full_jitter, equal_jitter, decorrelated_jitter, found "linear"`},
		{"f.toml", "delay = \"full-jitter\"\n", `f.toml:1: delay: expected one of none, fixed, exponential, full_jitter, equal_jitter, decorrelated_jitter, found "full-jitter" (did you mean full_jitter?)`},
		{"f.toml", "delay = \"fixed\"\nbase_delay_s = -1.5\n", "f.toml:2: base_delay_s: expected a finite number >= 0, found -1.5"},
		{"f.toml", "delay = \"fixed\"\nbase_delay_s = nan\n", "f.toml:2: base_delay_s: expected a finite number >= 0, found NaN"},
		{"f.toml", "delay = \"fixed\"\nbase_delay_s = inf\n", "f.toml:2: base_delay_s: expected a finite number >= 0, found +Inf"},
		{"f.json", "{\"delay\": \"fixed\",\n\"base_delay_s\": 1e999}", "f.json:2: base_delay_s: expected a finite number >= 0, found +Inf"},
		{"f.toml", "delay = \"fixed\"\n", `f.toml: base_delay_s: expected a number of seconds >= 0 (delay fixed uses it), found nothing`},
		{"f.toml", "delay = \"decorrelated_jitter\"\nbase_delay_s = 1\n", `f.toml: max_delay_s: expected a number of seconds >= base_delay_s (delay decorrelated_jitter uses it), found nothing`},
		{"f.toml", "delay = \"full_jitter\"\nbase_delay_s = 1\nmax_delay_s = 9\n", `f.toml: multiplier: expected a number >= 1 (delay full_jitter uses it), found nothing`},
		{"f.toml", strings.Replace(exp, "multiplier = 2", "multiplier = 0.5", 1), "f.toml:3: multiplier: expected at least 1 (1 keeps the delay at base_delay_s), found 0.5"},
		{"f.toml", strings.Replace(exp, "max_delay_s = 10", "max_delay_s = 0.5", 1), "f.toml:4: max_delay_s: expected at least base_delay_s (1), found 0.5"},
		{"f.toml", exp + "min_delay_s = 11\n", "f.toml:5: min_delay_s: expected at most max_delay_s (10), found 11"},
		{"f.toml", exp + "connect_budget_per_s = 5\nconnect_budget_window_s = 0\n", "f.toml:6: connect_budget_window_s: expected a number of seconds > 0, found 0"},
		{"f.toml", "delay = \"fixed\"\nbase_delay_s 5\n", "f.toml:2: invalid TOML: expected '.' or '=', but got '5' instead"},
		{"f.toml", "delay = \"fixed\"\ndelay = \"none\"\n", "f.toml:2: invalid TOML: Key 'delay' has already been defined."},
		{"f.json", "{\"delay\": \"fixed\",\n\"delay\": \"none\"}", "f.json:2: delay: expected each key once, found it again (first on line 1)"},
		{"f.json", "{\"delay\": \"fixed\",\n\"base_delay_s\": 5,\n}", "f.json:3: invalid JSON: invalid character '}' looking for beginning of object key string"},
		{"f.json", "{\"delay\": \"fixed\",\n", "f.json:2: invalid JSON: unexpected end of JSON input"},
		{"f.json", "{\"delay\": \"none\"}\n{}", "f.json:2: invalid JSON: expected the end of the file after the object"},
		{"f.json", "[1]", "f.json:1: expected a JSON object, found an array"},
		{"f.json", "delay = \"none\"", "f.json:1: invalid JSON: invalid character 'd' looking for beginning of value"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := Parse(tt.name, []byte(tt.data))
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want %s", tt.data, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse(%q):\n got %s\nwant %s", tt.data, err, tt.want)
			}
			var fe *FieldError
			var se *SyntaxError
			if !errors.As(err, &fe) && !errors.As(err, &se) {
				t.Errorf("error %T is neither a *FieldError nor a *SyntaxError", err)
			}
		})
	}
}

func TestNegativeZero(t *testing.T) {
	p, err := Parse("f.toml", []byte("delay = \"fixed\"\nbase_delay_s = -0.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if out := p.AppendTOML(nil); strings.Contains(string(out), "-0") {
		t.Errorf("-0 written back as:\n%s", out)
	}
}

func TestTOMLKeyLines(t *testing.T) {
	data := `# comment
name = """
max_delay_s = 1
"""
  "delay" = "fixed"
base_delay_s.x = 1
'quoted key' = 2
[table]
keepalive_s = 3
[[arr]]
`
	got := tomlKeyLines([]byte(data))
	want := map[string]int{"name": 2, "delay": 5, "base_delay_s": 6, "quoted key": 7, "table": 8, "arr": 10}
	if len(got) != len(want) {
		t.Errorf("tomlKeyLines = %v, want %v", got, want)
	}
	for k, line := range want {
		if got[k] != line {
			t.Errorf("line of %q = %d, want %d", k, got[k], line)
		}
	}
}

func TestLoadAndResolve(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fleet.toml")
	if err := os.WriteFile(path, []byte(fleetTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil || p.Name != "reference fleet" {
		t.Fatalf("Load = %+v, %v", p, err)
	}
	if q, err := Resolve(path); err != nil || q != p {
		t.Errorf("Resolve(file) = %+v, %v; want %+v", q, err, p)
	}
	if q, err := Resolve("autopaho"); err != nil || q.Name != "autopaho" {
		t.Errorf("Resolve(autopaho) = %+v, %v", q, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) error = %v, want not exist", err)
	}
	want := "nosuch: expected a policy file or a preset (" + strings.Join(PresetNames(), ", ") + "), found neither"
	if _, err := Resolve("nosuch"); err == nil || err.Error() != want {
		t.Errorf("Resolve(nosuch) error = %v, want %s", err, want)
	}
	if _, err := Resolve(dir); err == nil || !strings.HasSuffix(err.Error(), "found a directory") {
		t.Errorf("Resolve(dir) error = %v", err)
	}
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("delay = \"fixed\"\n"), 0o644)
	if _, err := Resolve(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": base_delay_s:") {
		t.Errorf("Resolve(bad) error = %v", err)
	}
}

// TestTOMLLinesAfterTripleQuotes: three quotes inside a string or a
// comment open no multi-line string, so later errors keep their line.
func TestTOMLLinesAfterTripleQuotes(t *testing.T) {
	for _, text := range []string{
		"name = \"it'''s\"\ndelay = \"fixed\"\nbase_delay_s = -1\n",
		"# a comment with ''' in it\ndelay = \"fixed\"\nbase_delay_s = -1\n",
		"name = \"\"\"two\nlines\"\"\"\nbase_delay_s = -1\ndelay = \"fixed\"\n",
	} {
		_, err := Parse("q.toml", []byte(text))
		want := "q.toml:3: base_delay_s:"
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: got %v, want an error starting %q", text, err, want)
		}
	}
}
