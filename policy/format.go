package policy

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/stormaudit/stormaudit/internal/jsonstr"
)

// comments are the short comments AppendTOML writes after each key.
var comments = map[string]string{
	"name":                    "free text, for reports",
	"delay":                   "none, fixed, exponential, full_jitter, equal_jitter or decorrelated_jitter",
	"base_delay_s":            "seconds: the ceiling at exponent 0; the delay of fixed",
	"max_delay_s":             "seconds: the cap on every delay",
	"multiplier":              "growth of the ceiling per attempt (1: constant)",
	"min_delay_s":             "seconds: the lower bound of a full_jitter draw",
	"immediate_first_retry":   "attempt 0 waits 0; attempt a >= 1 uses exponent a-1",
	"min_connect_spacing_s":   "seconds: the minimum gap between socket-opens of one host",
	"keepalive_s":             "seconds: the MQTT keepalive",
	"stable_reset_s":          "seconds up before the attempt counter resets (0: on CONNACK)",
	"auth_min_delay_s":        "seconds: the minimum delay after an authentication failure",
	"connect_budget_per_s":    "connects per second the broker accepts (0: undeclared)",
	"connect_budget_window_s": "seconds: the window the budget is counted over",
	"clean_session":           "the fleet's declared session kind",
	"startup_spread_s":        "seconds: devices starting together spread their first connects over this long",
	"outbox_limit":            "messages: the most a device's outbox holds (0: undeclared)",
}

// AppendTOML appends p as a TOML file to start from: a comment header,
// then one key per line with a short comment, in the order of the fields
// of Policy. It writes the keys the file or preset declared, delay, and
// the fields set in Go, but not a value a default filled in. Parse of the
// output gives back a policy equal to p (for a p from Parse or Preset).
func (p *Policy) AppendTOML(dst []byte) []byte {
	dst = append(dst, "# A reconnect policy for stormaudit: the keys and delay rules are in\n"...)
	dst = append(dst, "# docs/policy.md. Check it with: stormaudit policy check FILE\n"...)
	lines := make([]string, 0, len(keys))
	width := 0
	for i, k := range keys {
		if p.written(i) {
			line := k.name + " = " + p.valueText(k)
			lines = append(lines, line)
			width = max(width, min(len(line), 36))
		}
	}
	for _, line := range lines {
		name, _, _ := strings.Cut(line, " ")
		dst = append(dst, line...)
		dst = append(dst, strings.Repeat(" ", max(width-len(line), 0)+2)...)
		dst = append(dst, "# "+comments[name]+"\n"...)
	}
	return dst
}

// AppendJSON appends p as an indented JSON object holding the keys
// AppendTOML writes, in the same order.
func (p *Policy) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	sep := "\n"
	for i, k := range keys {
		if p.written(i) {
			dst = append(dst, sep+`  "`+k.name+`": `+p.valueText(k)...)
			sep = ",\n"
		}
	}
	return append(dst, "\n}\n"...)
}

// Summary returns the keys AppendTOML writes, other than name, as
// "delay full_jitter, base_delay_s 1, max_delay_s 120, ...": a line for
// reports.
func (p *Policy) Summary() string {
	var parts []string
	for i, k := range keys {
		if k.name != "name" && p.written(i) {
			text := p.valueText(k)
			if k.name == keyDelay {
				text = string(p.Delay)
			}
			parts = append(parts, k.name+" "+text)
		}
	}
	return strings.Join(parts, ", ")
}

// valueText writes the field k sets in a form both TOML and JSON read.
func (p *Policy) valueText(k key) string {
	v := p.value(k)
	switch v.Kind() {
	case reflect.Float64:
		return formatFloat(v.Float())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	}
	return string(jsonstr.AppendQuoted(nil, v.String(), tomlString))
}

// tomlString makes AppendQuoted write strings that are valid in both
// TOML and JSON: in double quotes, with ", \ and the control characters
// (DEL included) escaped, and invalid UTF-8 replaced by U+FFFD.
const tomlString = jsonstr.UTF8 | jsonstr.EscapeDEL
