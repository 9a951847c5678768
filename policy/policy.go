package policy

import (
	"reflect"
	"strings"
)

// Rule names how a delay is drawn. The package documentation gives the
// formula of each.
type Rule string

// The delay rules.
const (
	None         Rule = "none"                // always 0 (a hot loop)
	Fixed        Rule = "fixed"               // always base_delay_s
	Exponential  Rule = "exponential"         // ceiling(a), no jitter
	FullJitter   Rule = "full_jitter"         // uniform in [min_delay_s, ceiling(a)]
	EqualJitter  Rule = "equal_jitter"        // ceiling(a)/2 + uniform in [0, ceiling(a)/2]
	Decorrelated Rule = "decorrelated_jitter" // min(cap, uniform(base, 3*prev)), prev starts at base
)

// rules lists the rules in the order the documentation gives them.
var rules = []Rule{None, Fixed, Exponential, FullJitter, EqualJitter, Decorrelated}

// Policy is a fleet's declared reconnect policy: how its MQTT clients draw
// the delay before each reconnect attempt, and what they and the broker
// promise besides. Field names follow the reference client's
// ReconnectPolicy; the key of each field in a file is its json tag. Times
// are in seconds.
//
// A Policy comes from [Parse], [Load], [Resolve] or [Preset], which
// validate it and record which keys the file or preset declared
// ([Policy.Declared]). One built in Go has no such record; it should pass
// [Policy.Validate] before it is used. Policies are comparable with ==.
type Policy struct {
	Name                 string  `json:"name,omitempty" toml:"name,omitempty"`                   // free text, for reports
	Delay                Rule    `json:"delay" toml:"delay"`                                     // how a delay is drawn
	BaseDelayS           float64 `json:"base_delay_s" toml:"base_delay_s"`                       // the ceiling at exponent 0; the delay of fixed
	MaxDelayS            float64 `json:"max_delay_s" toml:"max_delay_s"`                         // the cap on every delay
	Multiplier           float64 `json:"multiplier" toml:"multiplier"`                           // growth of the ceiling per attempt; 1 keeps it at base
	MinDelayS            float64 `json:"min_delay_s" toml:"min_delay_s"`                         // lower bound of a full_jitter draw (autopaho: 5 s); default 0
	ImmediateFirstRetry  bool    `json:"immediate_first_retry" toml:"immediate_first_retry"`     // attempt 0 waits 0 and attempt a >= 1 uses exponent a-1 (paho-go)
	MinConnectSpacingS   float64 `json:"min_connect_spacing_s" toml:"min_connect_spacing_s"`     // minimum gap between socket-opens of one host
	KeepaliveS           float64 `json:"keepalive_s" toml:"keepalive_s"`                         // MQTT keepalive
	StableResetS         float64 `json:"stable_reset_s" toml:"stable_reset_s"`                   // the counter resets only after the session stayed up this long (0: on CONNACK)
	AuthMinDelayS        float64 `json:"auth_min_delay_s" toml:"auth_min_delay_s"`               // minimum delay after an authentication failure
	ConnectBudgetPerS    float64 `json:"connect_budget_per_s" toml:"connect_budget_per_s"`       // the broker's accept budget in connects per second (0: undeclared)
	ConnectBudgetWindowS float64 `json:"connect_budget_window_s" toml:"connect_budget_window_s"` // the window the budget is counted over; 1 when a budget is declared without one
	CleanSession         bool    `json:"clean_session" toml:"clean_session"`                     // the fleet's declared session kind
	StartupSpreadS       float64 `json:"startup_spread_s" toml:"startup_spread_s"`               // devices that start together spread their first connects over this long
	OutboxLimit          float64 `json:"outbox_limit" toml:"outbox_limit"`                       // the most messages a device's outbox holds (0: undeclared)

	declared uint32 // bit i set: the file or preset declared keys[i]
}

// key is one key of the file format, and the Policy field it sets.
type key struct {
	name  string       // as written in a file
	field int          // index of the field in Policy
	kind  reflect.Kind // reflect.String (name, delay), reflect.Float64 or reflect.Bool
}

// keys lists the keys in the order of Policy's fields, which is the order
// AppendTOML and AppendJSON write them in.
var keys = policyKeys()

// Key names used by name in validation and defaults.
const (
	keyDelay  = "delay"
	keyWindow = "connect_budget_window_s"
)

func policyKeys() []key {
	t := reflect.TypeFor[Policy]()
	var ks []key
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ks = append(ks, key{name: name, field: i, kind: f.Type.Kind()})
	}
	return ks
}

// lookup returns the index in keys of the key named name, or -1.
func lookup(name string) int {
	for i, k := range keys {
		if k.name == name {
			return i
		}
	}
	return -1
}

// keyNames returns the names of all keys, in file order.
func keyNames() []string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	return names
}

// value returns the field of p that k sets, settable.
func (p *Policy) value(k key) reflect.Value {
	return reflect.ValueOf(p).Elem().Field(k.field)
}

// Declared reports whether the file or preset p came from set the key
// named key (its name in a file, for example "max_delay_s"). Presets
// declare every key they use. It is false for unknown keys and for every
// key of a Policy built in Go.
func (p *Policy) Declared(key string) bool {
	i := lookup(key)
	return i >= 0 && p.declared&(1<<i) != 0
}

// declare records that the file set keys[i].
func (p *Policy) declare(i int) { p.declared |= 1 << i }

// given reports whether p has a value for the key named name: the file
// declared it, or the field is not zero (a Policy built or changed in Go).
func (p *Policy) given(name string) bool {
	i := lookup(name)
	return p.declared&(1<<i) != 0 || !p.value(keys[i]).IsZero()
}

// defaultWindow is the connect budget window of a budget declared without
// one.
const defaultWindow = 1

// applyDefaults sets the defaults of keys the file did not declare.
func (p *Policy) applyDefaults() {
	if p.ConnectBudgetPerS > 0 && !p.Declared(keyWindow) {
		p.ConnectBudgetWindowS = defaultWindow
	}
}

// written reports whether AppendTOML, AppendJSON and Summary write keys[i]:
// delay always, a key the file or preset declared, and a field set in Go,
// but not a value a default put there.
func (p *Policy) written(i int) bool {
	k := keys[i]
	switch {
	case k.name == keyDelay || p.declared&(1<<i) != 0:
		return true
	case k.name == keyWindow && p.ConnectBudgetPerS > 0 && p.ConnectBudgetWindowS == defaultWindow:
		return false
	}
	return !p.value(k).IsZero()
}
