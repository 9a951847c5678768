// Package config reads stormaudit.toml, a repository's configuration of
// stormaudit, as .golangci.yml is golangci-lint's: found in the working
// directory or the nearest directory above it that has one, up to the
// repository's root (Find), or named by --config.
//
// The file is TOML with these keys, all optional:
//
//	policy = "full-jitter"           # a preset, or a policy file (relative to this file)
//
// Paths in the file (the policy, check's baseline, output and broker-log)
// are relative to the file, wherever stormaudit runs.
//
//	[rules]
//	disable = ["session-settings"]   # these rules do not run
//	enable = ["resync", "spacing"]   # or only these run (not both)
//
//	[rules.resync]                   # a rule's thresholds (analyze.Tunable; stormaudit rules lists them)
//	group = 5
//	tick_s = 0.05
//
//	[severity]                       # a rule's findings get this severity
//	spacing = "error"                # error, warning or info
//
//	[check]                          # defaults for check's flags, by name
//	format = "text,sarif"
//	output = "-,check.sarif"
//	fail-on = "warning"
//	baseline = "stormaudit-baseline.json"
//
// A flag on the command line or its environment variable wins over the
// file. Parse rejects what it does not know with the file, the line and
// the key, what was expected, and the nearest known name.
package config

import (
	"errors"
	"fmt"
	"github.com/stormaudit/stormaudit/internal/sidefile"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/internal/near"
	"github.com/stormaudit/stormaudit/policy"
)

// FileName is the name Find looks for.
const FileName = "stormaudit.toml"

// Config is a parsed configuration file.
type Config struct {
	// Path is the file read; "" for no file (the zero Config).
	Path string
	// Policy is the policy key: a preset name or a policy file, made
	// relative to the working directory when it is a path.
	Policy string
	// Disabled and Enabled are the rules of [rules]; at most one is set.
	Disabled, Enabled []string
	// Severity maps rule ids to the severity their findings get.
	Severity map[string]analyze.Severity
	// Thresholds sets rules' thresholds, by rule id and name.
	Thresholds map[string]map[string]float64
	// Check holds the [check] table's values as a flag takes them, by
	// flag name, in the order of the file.
	Check []Setting
}

// A Setting is one key of a table of flags.
type Setting struct {
	Name, Value string
	Line        int
}

// An Error says what is wrong with a configuration file.
type Error struct {
	File     string
	Line     int    // 0 when not known
	Key      string // "" for the whole file
	Expected string
	Found    string
}

func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Key != "" {
		s += ": " + e.Key
	}
	return s + ": expected " + e.Expected + ", found " + e.Found
}

// Find returns the path of the FileName in dir or the nearest directory
// above it, or "" if none has one. It looks no higher than the root of
// the repository dir is in (the first directory with a .git), so that a
// checkout is configured by its own file alone.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, FileName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return "", nil // the repository's root
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", nil
		}
		dir = up
	}
}

// Load reads and parses the file at path.
func Load(path string) (*Config, error) {
	data, err := sidefile.Read(path, sidefile.MaxText)
	if err != nil {
		return nil, err
	}
	if err := sidefile.CheckNesting(path, data); err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses the configuration file named name.
func Parse(name string, data []byte) (*Config, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{File: name, Line: pe.Position.Line, Expected: "TOML", Found: pe.Message}
		}
		return nil, &Error{File: name, Expected: "TOML", Found: err.Error()}
	}
	p := &parser{name: name, lines: keyLines(data), c: &Config{Path: name}}
	if err := p.document(doc); err != nil {
		return nil, err
	}
	return p.c, nil
}

type parser struct {
	name  string
	lines map[string]int // "table.key" or "key" -> line
	c     *Config
}

func (p *parser) fail(key, expected, found string) error {
	return &Error{File: p.name, Line: p.lines[key], Key: key, Expected: expected, Found: found}
}

// unknown is the error for a key that is not one of known.
func (p *parser) unknown(key, name string, known []string) error {
	return p.unknownAs(key, name, known, "one of "+strings.Join(known, ", "))
}

// unknownAs is unknown with what was expected in words of its own.
func (p *parser) unknownAs(key, name string, known []string, expected string) error {
	found := "an unknown key"
	if near := near.Nearest(name, known); near != "" {
		found += " (did you mean " + near + "?)"
	}
	return p.fail(key, expected, found)
}

// rulesHint points to the command that lists the rules and their
// thresholds.
const rulesHint = "stormaudit rules lists them"

func (p *parser) document(doc map[string]any) error {
	for _, k := range p.sorted(doc, "") {
		v := doc[k]
		var err error
		switch k {
		case "policy":
			err = p.policy(v)
		case "rules":
			err = p.rules(v)
		case "severity":
			err = p.severity(v)
		case "check":
			err = p.check(v)
		default:
			err = p.unknown(k, k, []string{"policy", "rules", "severity", "check"})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sorted returns the keys of table (named prefix) in the order of their
// lines in the file.
func (p *parser) sorted(table map[string]any, prefix string) []string {
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if la, lb := p.lines[prefix+a], p.lines[prefix+b]; la != lb {
			return la - lb
		}
		return strings.Compare(a, b)
	})
	return keys
}

func (p *parser) policy(v any) error {
	s, ok := v.(string)
	if !ok || s == "" {
		return p.fail("policy", "a preset name or a policy file", describe(v))
	}
	if !slices.Contains(policy.PresetNames(), s) {
		s = p.relative(s) // a file, named relative to this one
	}
	p.c.Policy = s
	return nil
}

// relative returns path, a path relative to the configuration file,
// relative to the working directory instead (or absolute).
func (p *parser) relative(path string) string {
	if path == "" || path == "-" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(filepath.Dir(p.name), path)
}

// pathSettings are the [check] keys whose values are paths (output and
// broker-log, a comma-separated list of them), which are relative to the
// file.
var pathSettings = map[string]bool{"baseline": true, "output": true, "broker-log": true}

func (p *parser) table(key string, v any) (map[string]any, error) {
	t, ok := v.(map[string]any)
	if !ok {
		return nil, p.fail(key, "a table", describe(v))
	}
	return t, nil
}

func (p *parser) rules(v any) error {
	t, err := p.table("rules", v)
	if err != nil {
		return err
	}
	for _, k := range p.sorted(t, "rules.") {
		key := "rules." + k
		if sub, ok := t[k].(map[string]any); ok {
			if err := p.thresholds(k, sub); err != nil {
				return err
			}
			continue
		}
		if k != "enable" && k != "disable" {
			return p.unknown(key, k, []string{"enable", "disable", "or a table [rules.ID] of a rule's thresholds"})
		}
		ids, err := p.ruleIDs(key, t[k])
		if err != nil {
			return err
		}
		if k == "enable" {
			p.c.Enabled = ids
		} else {
			p.c.Disabled = ids
		}
	}
	if p.c.Enabled != nil && p.c.Disabled != nil {
		return p.fail("rules.enable", "enable or disable, not both", "both")
	}
	return nil
}

// thresholds reads [rules.ID], the thresholds of rule id.
func (p *parser) thresholds(id string, t map[string]any) error {
	if !slices.Contains(RuleIDs(), id) {
		return p.unknownRule("rules."+id, id)
	}
	known := analyze.RuleThresholds()[id]
	var names []string
	for _, th := range known {
		names = append(names, th.Name)
	}
	if p.c.Thresholds == nil {
		p.c.Thresholds = map[string]map[string]float64{}
	}
	set := map[string]float64{}
	for _, name := range p.sorted(t, "rules."+id+".") {
		key := "rules." + id + "." + name
		k := slices.IndexFunc(known, func(th analyze.Threshold) bool { return th.Name == name })
		if k < 0 {
			if len(known) == 0 {
				var tunable []string
				for _, rid := range RuleIDs() {
					if len(analyze.RuleThresholds()[rid]) > 0 {
						tunable = append(tunable, rid)
					}
				}
				return p.fail(key, "a rule with thresholds ("+strings.Join(tunable, ", ")+"; "+rulesHint+"); "+id+" has none", "the key "+strconv.Quote(name))
			}
			return p.unknownAs(key, name, names, "a threshold of "+id+": one of "+strings.Join(names, ", ")+" ("+rulesHint+")")
		}
		v, ok := number(t[name])
		if !ok {
			return p.fail(key, "a number", describe(t[name]))
		}
		if want := analyze.CheckThreshold(known[k], v); want != "" {
			return p.fail(key, want, describe(t[name]))
		}
		set[name] = v
	}
	p.c.Thresholds[id] = set
	return nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func (p *parser) ruleIDs(key string, v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, p.fail(key, "an array of rule ids", describe(v))
	}
	ids := make([]string, 0, len(list))
	for _, x := range list {
		id, ok := x.(string)
		if !ok {
			return nil, p.fail(key, "rule ids (strings)", describe(x))
		}
		if !slices.Contains(RuleIDs(), id) {
			return nil, p.unknownRule(key, id)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func (p *parser) unknownRule(key, id string) error {
	found := "the rule " + strconv.Quote(id)
	if near := near.Nearest(id, RuleIDs()); near != "" {
		found += " (did you mean " + near + "?)"
	}
	return p.fail(key, "a rule id ("+rulesHint+"; docs/rules.md defines them)", found)
}

func (p *parser) severity(v any) error {
	t, err := p.table("severity", v)
	if err != nil {
		return err
	}
	p.c.Severity = map[string]analyze.Severity{}
	for _, id := range p.sorted(t, "severity.") {
		key := "severity." + id
		if !slices.Contains(RuleIDs(), id) {
			return p.unknownRule(key, id)
		}
		s, _ := t[id].(string)
		sev, ok := analyze.ParseSeverity(s)
		if !ok {
			return p.fail(key, "error, warning or info", describe(t[id]))
		}
		p.c.Severity[id] = sev
	}
	return nil
}

func (p *parser) check(v any) error {
	t, err := p.table("check", v)
	if err != nil {
		return err
	}
	for _, k := range p.sorted(t, "check.") {
		var s string
		switch x := t[k].(type) {
		case string:
			s = x
		case int64:
			s = strconv.FormatInt(x, 10)
		case bool:
			s = strconv.FormatBool(x)
		default:
			return p.fail("check."+k, "a string, an integer or true or false", describe(x))
		}
		if pathSettings[k] {
			parts := strings.Split(s, ",")
			for i := range parts {
				parts[i] = p.relative(strings.TrimSpace(parts[i]))
			}
			s = strings.Join(parts, ",")
		}
		p.c.Check = append(p.c.Check, Setting{Name: k, Value: s, Line: p.lines["check."+k]})
	}
	return nil
}

// RuleIDs lists the ids of check's rules, in catalogue order.
func RuleIDs() []string {
	var ids []string
	for _, r := range analyze.Rules() {
		ids = append(ids, r.Info().ID)
	}
	return ids
}

// describe names a value of the wrong type.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return "the string " + strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case int64, float64:
		return fmt.Sprint("the number ", x)
	case map[string]any:
		return "a table"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// keyLines finds the line of each key of a TOML document, as "key" for a
// top-level key or table header and "table.key" for a key of a table, for
// error messages (the toml package keeps positions to itself). It reads
// the simple documents a configuration is: no multi-line strings.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	table := ""
	for i, line := range strings.Split(string(data), "\n") {
		s := strings.TrimSpace(line)
		key := ""
		switch {
		case strings.HasPrefix(s, "["):
			if end := strings.Index(s, "]"); end > 0 { // a comment may follow
				s = s[:end]
			}
			table = strings.TrimSpace(strings.Trim(s, "[]"))
			key = table
		case strings.Contains(s, "=") && !strings.HasPrefix(s, "#"):
			k := strings.Trim(strings.TrimSpace(s[:strings.Index(s, "=")]), `"'`)
			if key = k; table != "" {
				key = table + "." + k
			}
		}
		if _, seen := lines[key]; key != "" && !seen {
			lines[key] = i + 1
		}
	}
	return lines
}
