package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/config"
	"github.com/urfave/cli/v3"
)

// rootConfigFlags are the root's flags that choose the configuration file.
var rootConfigFlags = []cli.Flag{
	&cli.StringFlag{Name: "config", Usage: "the configuration file (default: stormaudit.toml here or in the nearest directory above)", Sources: cli.EnvVars("STORMAUDIT_CONFIG"), TakesFile: true},
	&cli.BoolFlag{Name: "no-config", Usage: "read no configuration file"},
}

// loadConfig reads the configuration cmd runs under: --config, or the
// stormaudit.toml found from the working directory up, or none.
func loadConfig(cmd *cli.Command) (*config.Config, error) {
	root := cmd.Root()
	if root.Bool("no-config") {
		return &config.Config{}, nil
	}
	path := root.String("config")
	if path == "" {
		var err error
		if path, err = config.Find("."); err != nil || path == "" {
			return &config.Config{}, err
		}
	}
	c, err := config.Load(path)
	if err != nil {
		return nil, usageErr("config: %v", err)
	}
	return c, nil
}

// applyConfig sets, from the configuration, the flags of cmd that the
// command line and the environment left unset: --policy, and for check
// the [check] table; it returns the rules' selection and severities.
func applyConfig(cmd *cli.Command, c *config.Config) (disabled map[string]bool, severity map[string]analyze.Severity, err error) {
	if c.Policy != "" && flagNamed(cmd, "policy") != nil && !setOutside(cmd, "policy") {
		if err := cmd.Set("policy", c.Policy); err != nil {
			return nil, nil, usageErr("config: %s: policy: %v", c.Path, err)
		}
	}
	if cmd.Name == "check" {
		// outputs pair with formats: the file's go with the file's formats
		ownFormat := !setOutside(cmd, "format")
		for _, s := range c.Check {
			if s.Name == "output" && !ownFormat {
				continue
			}
			if err := applySetting(cmd, c.Path, s); err != nil {
				return nil, nil, err
			}
		}
	}
	disabled = map[string]bool{}
	for _, id := range c.Disabled {
		disabled[id] = true
	}
	if c.Enabled != nil {
		for _, id := range config.RuleIDs() {
			disabled[id] = !slices.Contains(c.Enabled, id)
		}
	}
	return disabled, c.Severity, nil
}

// applySetting sets check's flag s.Name to s.Value unless it is set.
func applySetting(cmd *cli.Command, path string, s config.Setting) error {
	at := fmt.Sprintf("%s:%d: check.%s", path, s.Line, s.Name)
	names := configurable(cmd)
	if !slices.Contains(names, s.Name) {
		found := "an unknown key"
		if n := nearest(s.Name, names); n != "" {
			found += " (did you mean " + n + "?)"
		}
		return usageErr("config: %s: expected a flag of check (%s), found %s", at, strings.Join(names, ", "), found)
	}
	if setOutside(cmd, s.Name) {
		return nil // the command line or the environment wins
	}
	if err := cmd.Set(s.Name, s.Value); err != nil {
		return usageErr("config: %s: expected %s, found %q", at, valueKind(cmd, s.Name), s.Value)
	}
	return nil
}

// setOutside reports whether the command line or the environment set
// cmd's flag name; an empty string (an empty variable) sets nothing.
func setOutside(cmd *cli.Command, name string) bool {
	_, isString := flagNamed(cmd, name).(*cli.StringFlag)
	return cmd.IsSet(name) && !(isString && cmd.String(name) == "")
}

// valueKind says what cmd's flag name takes.
func valueKind(cmd *cli.Command, name string) string {
	for _, f := range cmd.Flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		switch f.(type) {
		case *cli.IntFlag, *cli.Int64Flag:
			return "an integer"
		case *cli.DurationFlag:
			return "a duration (like 1s or 500ms)"
		case *cli.BoolFlag:
			return "true or false"
		}
	}
	return "a string"
}

// configurable lists the flags of cmd a configuration may set: the
// visible ones but those of single runs, and --policy, which the
// top-level policy key sets.
func configurable(cmd *cli.Command) []string {
	var names []string
	for _, f := range cmd.VisibleFlags() {
		name := f.Names()[0]
		if name != "help" && name != "write-baseline" && name != "quiet" && name != "policy" {
			names = append(names, name)
		}
	}
	return names
}

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "show the configuration stormaudit.toml gives",
		Description: `stormaudit.toml, in the working directory or the nearest directory above it
(or --config FILE), configures check and browse for a repository: the policy,
the rules that run, their severities and thresholds (stormaudit rules lists
them), and defaults for check's flags. A flag on the command line or its
environment variable wins over the file.`,
		OnUsageError: onUsageError,
		Action:       unknownCommand,
		Commands: []*cli.Command{{
			Name:         "show",
			Usage:        "print the effective configuration",
			OnUsageError: onUsageError,
			Action:       runConfigShow,
		}},
	}
}

// runConfigShow prints the configuration as TOML: where it came from,
// then every setting in effect, the defaults included.
func runConfigShow(_ context.Context, cmd *cli.Command) error {
	c, err := loadConfig(cmd)
	if err != nil {
		return err
	}
	w := cmd.Root().Writer
	if c.Path == "" {
		fmt.Fprintf(w, "# no %s here or above (defaults)\n", config.FileName)
	} else {
		fmt.Fprintf(w, "# from %s\n", c.Path)
	}
	policy := c.Policy
	if policy == "" {
		policy = "(inferred from the log)"
	}
	fmt.Fprintf(w, "policy = %q\n", policy)
	check := checkCommand()
	disabled, severity, err := applyConfig(check, &config.Config{Disabled: c.Disabled, Enabled: c.Enabled, Severity: c.Severity})
	if err != nil {
		return err
	}
	showRules(w, disabled, severity)
	showThresholds(w, c.Thresholds)
	names := configurable(check)
	for _, s := range c.Check {
		if !slices.Contains(names, s.Name) {
			return applySetting(check, c.Path, s) // says what is wrong
		}
	}
	fmt.Fprintln(w, "\n[check]")
	for _, name := range names {
		v := flagDefault(check, name)
		for _, s := range c.Check {
			if s.Name == name {
				v = s.Value
			}
		}
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			fmt.Fprintf(w, "%s = %s\n", name, v)
		} else {
			fmt.Fprintf(w, "%s = %q\n", name, v)
		}
	}
	return nil
}

func showRules(w io.Writer, disabled map[string]bool, severity map[string]analyze.Severity) {
	var on, off []string
	for _, id := range config.RuleIDs() {
		if disabled[id] {
			off = append(off, fmt.Sprintf("%q", id))
		} else {
			on = append(on, fmt.Sprintf("%q", id))
		}
	}
	fmt.Fprintf(w, "\n[rules]\n# running: %s\ndisable = [%s]\n\n[severity]\n", strings.Join(on, ", "), strings.Join(off, ", "))
	for _, r := range analyze.Rules() {
		info := r.Info()
		sev, set := severity[info.ID]
		if !set {
			sev = info.Severity
		}
		fmt.Fprintf(w, "%s = %q\n", info.ID, sev.String())
	}
}

// showThresholds writes a [rules.ID] table for each rule with
// thresholds, every threshold with its value in effect.
func showThresholds(w io.Writer, set map[string]map[string]float64) {
	all := analyze.RuleThresholds()
	for _, id := range config.RuleIDs() {
		ths := all[id]
		if len(ths) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n[rules.%s]\n", id)
		for _, th := range ths {
			v, ok := set[id][th.Name]
			if !ok {
				v = th.Default
			}
			fmt.Fprintf(w, "%s = %v  # %s\n", th.Name, v, th.Help)
		}
	}
}

// flagDefault is the value of cmd's flag name when nothing sets it.
func flagDefault(cmd *cli.Command, name string) string {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			if d, ok := f.(cli.DocGenerationFlag); ok {
				v := d.GetValue()
				if u, err := strconv.Unquote(v); err == nil {
					return u
				}
				return v
			}
		}
	}
	return ""
}
