package front

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/cmd/internal/front/config"
	"github.com/stormaudit/stormaudit/internal/near"
	"github.com/stormaudit/stormaudit/policy"
)

// CheckKeys are the keys of a configuration's [check] table: the flags
// of stormaudit check a configuration may set, in the order of its help
// (not those of a single run, --write-baseline and --quiet, nor --policy,
// which the top-level policy key sets). A driver that lacks one of them
// says so in its Flags.Set.
var CheckKeys = []string{
	"format", "output", "fail-on", "window", "per-rule", "annotations", "max-rejects",
	"baseline", "max-results", "broker-log", "broker-log-format", "broker-log-tz",
}

// EnvVars are the environment variables that set the flags both drivers
// take, by flag name, when the command line does not.
var EnvVars = map[string]string{
	"config":  "STORMAUDIT_CONFIG",
	"policy":  "STORMAUDIT_POLICY",
	"format":  "STORMAUDIT_FORMAT",
	"output":  "STORMAUDIT_OUTPUT",
	"fail-on": "STORMAUDIT_FAIL_ON",
}

// LoadConfig reads the configuration a check runs under: the file path
// (--config) when given; else, unless noConfig (--no-config), the
// stormaudit.toml found from the working directory up (config.Find);
// else none, the zero Config.
func LoadConfig(path string, noConfig bool) (*config.Config, error) {
	if noConfig {
		return &config.Config{}, nil
	}
	if path == "" {
		var err error
		if path, err = config.Find("."); err != nil || path == "" {
			return &config.Config{}, err
		}
	}
	c, err := config.Load(path)
	if err != nil {
		return nil, fmt.Errorf("config: %v", err)
	}
	return c, nil
}

// ConfigPath returns the file LoadConfig reads, as an input no output
// may overwrite: path, or the one found, or "" for none.
func ConfigPath(path string, noConfig bool) string {
	if path != "" || noConfig {
		return path
	}
	p, err := config.Find(".")
	if err != nil {
		return ""
	}
	return p
}

// Flags are a driver's flags, as a configuration sets them.
type Flags interface {
	// Has reports whether the driver has the flag name.
	Has(name string) bool
	// IsSet reports whether the command line or the environment set the
	// flag name; an empty string (an empty variable) sets nothing.
	IsSet(name string) bool
	// Set sets the flag name to value. For a key of [check] the driver
	// does not take it does nothing when the key changes no finding and
	// no output of this driver, and returns a *NotTakenError otherwise.
	Set(name, value string) error
	// Kind says what the flag name takes (KindOf), for errors.
	Kind(name string) string
}

// A NotTakenError is Flags.Set's refusal of a [check] key the driver
// does not take.
type NotTakenError struct {
	Why string // a sentence, with what to do instead
}

func (e *NotTakenError) Error() string { return e.Why }

// KindOf says what a flag whose value is v takes.
func KindOf(v any) string {
	switch v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "an integer"
	case time.Duration:
		return "a duration (like 1s or 500ms)"
	case bool:
		return "true or false"
	}
	return "a string"
}

// ApplyConfig sets, from c, the flags fs that the command line and the
// environment left unset: --policy from the policy key, and when table
// is true (for check) the flags of the [check] table. A format set on the
// command line drops the table's outputs, which pair with its formats.
func ApplyConfig(c *config.Config, fs Flags, table bool) error {
	if c.Policy != "" && fs.Has("policy") && !fs.IsSet("policy") {
		if err := fs.Set("policy", c.Policy); err != nil {
			return fmt.Errorf("config: %s: policy: %v", c.Path, err)
		}
	}
	if !table {
		return nil
	}
	ownFormat := !fs.IsSet("format")
	for _, s := range c.Check {
		if s.Name == "output" && !ownFormat {
			continue
		}
		if err := ApplySetting(fs, c.Path, s); err != nil {
			return err
		}
	}
	return nil
}

// ApplySetting sets the flag s.Name, a key of the [check] table of the
// configuration at path, to s.Value unless it is set.
func ApplySetting(fs Flags, path string, s config.Setting) error {
	at := fmt.Sprintf("%s:%d: check.%s", path, s.Line, s.Name)
	if !slices.Contains(CheckKeys, s.Name) {
		found := "an unknown key"
		if n := near.Nearest(s.Name, CheckKeys); n != "" {
			found += " (did you mean " + n + "?)"
		}
		return fmt.Errorf("config: %s: expected a flag of check (%s), found %s", at, strings.Join(CheckKeys, ", "), found)
	}
	if fs.IsSet(s.Name) {
		return nil // the command line or the environment wins
	}
	if err := fs.Set(s.Name, s.Value); err != nil {
		if nt := (*NotTakenError)(nil); errors.As(err, &nt) {
			return fmt.Errorf("config: %s: %s", at, nt.Why)
		}
		return fmt.Errorf("config: %s: expected %s, found %q", at, fs.Kind(s.Name), s.Value)
	}
	return nil
}

// Rules returns the rules c disables (all but those it enables, when it
// enables some) and the severities it gives them.
func Rules(c *config.Config) (disabled map[string]bool, severity map[string]analyze.Severity) {
	disabled = map[string]bool{}
	for _, id := range c.Disabled {
		disabled[id] = true
	}
	if c.Enabled != nil {
		for _, id := range config.RuleIDs() {
			disabled[id] = !slices.Contains(c.Enabled, id)
		}
	}
	return disabled, c.Severity
}

// Options returns the analyze options of the command called name (for
// errors): the rules, severities and thresholds of c, the window (>0)
// and the declared policy pol, a policy file or a preset ("" to infer it
// from the log).
func Options(name string, c *config.Config, pol string, window time.Duration) (analyze.Options, error) {
	disabled, severity := Rules(c)
	opts := analyze.Options{Window: window, Disabled: disabled, Severity: severity, Thresholds: c.Thresholds}
	if opts.Window <= 0 {
		return opts, fmt.Errorf("%s: --window: expected a duration > 0, found %v", name, opts.Window)
	}
	if pol != "" {
		p, err := policy.Resolve(pol)
		if err != nil && c != nil && c.Path != "" && pol == c.Policy {
			return opts, fmt.Errorf("%s: %s: policy: %v", name, c.Path, err) // the file's key, not a flag given
		}
		if err != nil {
			return opts, fmt.Errorf("%s: --policy: %v", name, err)
		}
		opts.Policy, opts.PolicyName = &p, pol
	}
	return opts, nil
}
