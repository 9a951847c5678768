package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stormaudit/stormaudit/internal/jsonstr"
)

// presetDef is a built-in policy, written the way a policy file is.
type presetDef struct {
	name, desc, toml string
}

// presetDefs are the built-in policies. Where their numbers come from is
// in docs/policy.md.
var presetDefs = []presetDef{
	{"paho-go", "eclipse/paho.mqtt.golang defaults: an immediate first retry, then 1 s doubling to 10 min, no jitter", `
delay = "exponential"
base_delay_s = 1
multiplier = 2
max_delay_s = 600
immediate_first_retry = true
keepalive_s = 30
clean_session = true
`},
	{"paho-python", "paho-mqtt (Python) reconnect_delay_set(min_delay=1, max_delay=120): 1 s doubling to 120 s, no jitter", `
delay = "exponential"
base_delay_s = 1
multiplier = 2
max_delay_s = 120
keepalive_s = 60
clean_session = true
`},
	{"autopaho", "eclipse/paho.golang autopaho default backoff: uniform in [5 s, 10 s * 1.5^a], capped at 10 min", `
delay = "full_jitter"
min_delay_s = 5
base_delay_s = 10
multiplier = 1.5
max_delay_s = 600
keepalive_s = 20
clean_session = true
`},
	{"full-jitter", "the well-behaved reference client: uniform in [0, min(120 s, 1 s * 2^a)], 0.25 s spacing, persistent sessions", `
delay = "full_jitter"
base_delay_s = 1
multiplier = 2
max_delay_s = 120
min_connect_spacing_s = 0.25
keepalive_s = 45
clean_session = false
`},
	{"fixed", "a fixed 5 s timer: the phase-locked fleet of the classic reconnect storm", `
delay = "fixed"
base_delay_s = 5
keepalive_s = 45
clean_session = false
`},
	{"exponential", "1 s doubling to 120 s without jitter: a fleet that stays in phase", `
delay = "exponential"
base_delay_s = 1
multiplier = 2
max_delay_s = 120
keepalive_s = 45
clean_session = false
`},
}

// presets are presetDefs parsed, by name.
var presets = parsePresets()

func parsePresets() map[string]Policy {
	m := make(map[string]Policy, len(presetDefs))
	for _, d := range presetDefs {
		file := "name = " + string(jsonstr.AppendQuoted(nil, d.name, tomlString)) + "\n" + d.toml
		p, err := Parse(d.name+".toml", []byte(file))
		if err != nil {
			panic("policy: preset " + err.Error())
		}
		m[d.name] = p
	}
	return m
}

// Preset returns a copy of the built-in policy named name. Its Name is
// name, and it declares every key it uses.
func Preset(name string) (Policy, error) {
	p, ok := presets[name]
	if !ok {
		return Policy{}, fmt.Errorf("unknown preset %q; expected one of %s", name, strings.Join(PresetNames(), ", "))
	}
	return p, nil
}

// PresetNames returns the names of the presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presetDefs))
	for _, d := range presetDefs {
		names = append(names, d.name)
	}
	slices.Sort(names)
	return names
}

// Describe returns the one-line description of the preset named name, or
// "" if there is none.
func Describe(name string) string {
	for _, d := range presetDefs {
		if d.name == name {
			return d.desc
		}
	}
	return ""
}
