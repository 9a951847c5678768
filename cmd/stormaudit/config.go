package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/cmd/internal/front"
	"github.com/stormaudit/stormaudit/cmd/internal/front/config"
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
	return front.LoadConfig(cmd.Root().String("config"), cmd.Root().Bool("no-config"))
}

// cliFlags are a command's flags as front.ApplyConfig sets them.
type cliFlags struct{ cmd *cli.Command }

func (f cliFlags) Has(name string) bool { return flagNamed(f.cmd, name) != nil }

// IsSet reports whether the command line or the environment set the
// flag; an empty string (an empty variable) sets nothing.
func (f cliFlags) IsSet(name string) bool {
	_, isString := flagNamed(f.cmd, name).(*cli.StringFlag)
	return f.cmd.IsSet(name) && !(isString && f.cmd.String(name) == "")
}

func (f cliFlags) Set(name, value string) error { return f.cmd.Set(name, value) }
func (f cliFlags) Kind(name string) string      { return front.KindOf(f.cmd.Value(name)) }

// configurable lists the flags of cmd a configuration may set: the
// visible ones but those of single runs, and --policy, which the
// top-level policy key sets.
func configurable(cmd *cli.Command) []string {
	var names []string
	for _, f := range cmd.VisibleFlags() {
		name := f.Names()[0]
		// a run's own, not a repository's: the baseline it writes, its
		// quietness, its time window; the policy has a key of its own
		if name != "help" && name != "write-baseline" && name != "quiet" && name != "policy" && name != "since" && name != "until" {
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
	// what it prints reads back as a stormaudit.toml: what is not set is
	// a comment
	if c.Policy == "" {
		fmt.Fprintf(w, "# policy = \"FILE or preset\"  (not set: inferred from the log)\n")
	} else {
		fmt.Fprintf(w, "policy = %q\n", c.Policy)
	}
	check := checkCommand()
	disabled, severity := front.Rules(c)
	showRules(w, disabled, severity)
	showThresholds(w, c.Thresholds)
	names := configurable(check)
	for _, s := range c.Check {
		if !slices.Contains(names, s.Name) {
			return front.ApplySetting(cliFlags{check}, c.Path, s) // says what is wrong
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
		} else if v == "" {
			fmt.Fprintf(w, "# %s = \"\"  (not set)\n", name)
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

// flagOrigin names where the value of cmd's flag name came from, for an
// error about it: the command line (--name), its environment variable,
// or the configuration's [check] key.
func flagOrigin(cmd *cli.Command, name string) string {
	flag := "--" + name
	if slices.ContainsFunc(os.Args[1:], func(a string) bool { return a == flag || strings.HasPrefix(a, flag+"=") }) {
		return flag
	}
	if env := front.EnvVars[name]; env != "" {
		if v := os.Getenv(env); v != "" && v == cmd.String(name) {
			return env + " (" + flag + ")"
		}
	}
	if p := front.ConfigPath(cmd.Root().String("config"), cmd.Root().Bool("no-config")); p != "" && cmd.IsSet(name) {
		return p + ": check." + name + " (" + flag + ")"
	}
	return flag
}
