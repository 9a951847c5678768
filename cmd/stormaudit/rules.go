package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/stormaudit/stormaudit/analyze"
	"github.com/stormaudit/stormaudit/cmd/internal/front"
	"github.com/stormaudit/stormaudit/cmd/internal/front/config"
	"github.com/urfave/cli/v3"
)

func rulesCommand() *cli.Command {
	return &cli.Command{
		Name:  "rules",
		Usage: "list the rules check runs: severity, needs, thresholds",
		Description: `Lists every rule check runs, in the order of docs/rules.md (which defines
each): its id, its default severity, a one-line summary, and

  needs       the policy keys it cannot run without (declared with --policy,
              or inferred from the log where marked), or the broker's log
              (--broker-log); without them check skips the rule
  uses        policy keys that change what it judges when declared
  threshold   a number it judges by, its default and the values it takes:
              stormaudit.toml sets it under [rules.ID]

--format json prints an array of objects: id, severity, summary,
needs_policy_keys (a list of lists: one key of each inner list is needed),
needs_broker_log, uses_policy_keys and thresholds (name, default, min, max,
integer, help).`,
		OnUsageError: onUsageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Aliases: []string{"f"}, Usage: "text or json", Value: "text"},
		},
		Action: runRules,
	}
}

// ruleEntry is what rules lists of a rule: its JSON object.
type ruleEntry struct {
	ID              string           `json:"id"`
	Enabled         bool             `json:"enabled"`          // not disabled by stormaudit.toml
	Severity        string           `json:"severity"`         // as stormaudit.toml sets it, else the default
	DefaultSeverity string           `json:"default_severity"` // the rule's own
	Summary         string           `json:"summary"`
	NeedsPolicyKeys [][]string       `json:"needs_policy_keys"`
	NeedsBrokerLog  bool             `json:"needs_broker_log"`
	UsesPolicyKeys  []string         `json:"uses_policy_keys"`
	Thresholds      []thresholdEntry `json:"thresholds"`
}

// thresholdEntry is a threshold of a rule (analyze.Threshold).
type thresholdEntry struct {
	Name    string  `json:"name"`
	Value   float64 `json:"value"` // as stormaudit.toml sets it, else the default
	Default float64 `json:"default"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Integer bool    `json:"integer"`
	Help    string  `json:"help"`
}

// ruleEntries describes every rule of the catalogue, in its order, from
// the rules themselves, as the configuration c sets them.
func ruleEntries(c *config.Config) []ruleEntry {
	disabled, severity := front.Rules(c)
	var out []ruleEntry
	for _, r := range analyze.Rules() {
		info := r.Info()
		e := ruleEntry{ID: info.ID, Enabled: !disabled[info.ID], Severity: info.Severity.String(), DefaultSeverity: info.Severity.String(),
			Summary: info.Title, NeedsPolicyKeys: [][]string{},
			NeedsBrokerLog: info.NeedsBrokerLog, UsesPolicyKeys: []string{}, Thresholds: []thresholdEntry{}}
		if sev, ok := severity[info.ID]; ok {
			e.Severity = sev.String()
		}
		for _, any := range info.Needs {
			e.NeedsPolicyKeys = append(e.NeedsPolicyKeys, append([]string{}, any...))
		}
		e.UsesPolicyKeys = append(e.UsesPolicyKeys, info.Uses...)
		if t, ok := r.(analyze.Tunable); ok {
			for _, th := range t.Thresholds() {
				v, ok := c.Thresholds[info.ID][th.Name]
				if !ok {
					v = th.Default
				}
				e.Thresholds = append(e.Thresholds, thresholdEntry{Name: th.Name, Value: v, Default: th.Default, Min: th.Min, Max: th.Max, Integer: th.Integer, Help: th.Help})
			}
		}
		out = append(out, e)
	}
	return out
}

func runRules(_ context.Context, cmd *cli.Command) error {
	if cmd.NArg() != 0 {
		return usageErr("rules: expected no arguments, found %d", cmd.NArg())
	}
	w := cmd.Root().Writer
	c, err := loadConfig(cmd)
	if err != nil {
		return err
	}
	switch format := cmd.String("format"); format {
	case "text":
		writeRulesText(w, c, ruleEntries(c))
		return nil
	case "json":
		b, err := json.MarshalIndent(ruleEntries(c), "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	default:
		return usageErr("rules: --format: expected text or json, found %q", format)
	}
}

// writeRulesText writes the rules as a list: a line for each, its id,
// severity and summary, and under it what it needs and uses and its
// thresholds.
func writeRulesText(w io.Writer, c *config.Config, rules []ruleEntry) {
	width := 0
	for _, r := range rules {
		width = max(width, len(r.ID))
	}
	fmt.Fprintf(w, "%d rules, in the order of docs/rules.md, which defines each.\n", len(rules))
	if c.Path != "" {
		fmt.Fprintf(w, "As %s sets them: what it changes is marked.\n", c.Path)
	}
	fmt.Fprintf(w, "stormaudit.toml sets a threshold under [rules.ID]; --policy FILE declares the keys a rule needs.\n\n")
	for _, r := range rules {
		sev := r.Severity
		if !r.Enabled {
			sev = "off"
		}
		line := fmt.Sprintf("%-*s  %-7s  %s", width, r.ID, sev, r.Summary)
		switch {
		case !r.Enabled:
			line += "  (disabled by the configuration)"
		case r.Severity != r.DefaultSeverity:
			line += fmt.Sprintf("  (%s by the configuration; by default %s)", r.Severity, r.DefaultSeverity)
		}
		fmt.Fprintln(w, line)
		var needs []string
		for _, any := range r.NeedsPolicyKeys {
			var alts []string
			for _, k := range any {
				if analyze.Inferable(k) {
					k += " (or inferred)"
				}
				alts = append(alts, k)
			}
			needs = append(needs, strings.Join(alts, " or "))
		}
		if r.NeedsBrokerLog {
			needs = append(needs, "the broker's log (--broker-log)")
		}
		if len(needs) > 0 {
			fmt.Fprintf(w, "    needs      %s\n", strings.Join(needs, ", "))
		}
		if len(r.UsesPolicyKeys) > 0 {
			fmt.Fprintf(w, "    uses       %s\n", strings.Join(r.UsesPolicyKeys, ", "))
		}
		for _, th := range r.Thresholds {
			kind := "a number"
			if th.Integer {
				kind = "a whole number"
			}
			set := ""
			if th.Value != th.Default {
				set = fmt.Sprintf(" by the configuration (default %s)", num(th.Default))
			}
			fmt.Fprintf(w, "    threshold  %s = %s%s: %s (%s from %s to %s)\n", th.Name, num(th.Value), set, th.Help, kind, num(th.Min), num(th.Max))
		}
	}
}

// num writes a threshold's value as short as exact.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
