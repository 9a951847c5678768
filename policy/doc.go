// Package policy reads a fleet's declared reconnect policy: how its MQTT
// clients draw the delay before each reconnect attempt, and what the
// clients and the broker promise besides. A policy is a committed file,
// TOML or JSON, or one of the built-in presets. docs/policy.md is the
// user's reference; this summary states the same rules.
//
// # Keys
//
// A file is one TOML table or JSON object of these keys; times are in
// seconds, and every number must be finite and >= 0.
//
//	name                     string  free text, for reports
//	delay                    string  the delay rule (below); required
//	base_delay_s             number  the ceiling at exponent 0; the delay of fixed
//	max_delay_s              number  the cap on every delay
//	multiplier               number  growth of the ceiling per attempt, >= 1 (1: constant)
//	min_delay_s              number  lower bound of a full_jitter draw; default 0
//	immediate_first_retry    bool    attempt 0 waits 0, attempt a >= 1 uses exponent a-1
//	min_connect_spacing_s    number  minimum gap between socket-opens of one host
//	keepalive_s              number  the MQTT keepalive
//	stable_reset_s           number  the counter resets only after the session stayed up this long (0: on CONNACK)
//	auth_min_delay_s         number  minimum delay after an authentication failure
//	connect_budget_per_s     number  the broker's accept budget, connects per second (0: undeclared)
//	connect_budget_window_s  number  the window the budget is counted over, > 0; default 1 with a budget
//	clean_session            bool    the fleet's declared session kind
//	startup_spread_s         number  devices starting together spread their first connects over this long
//	outbox_limit             number  the most messages a device's outbox holds, a whole number (0: undeclared)
//
// # Delay rules
//
// The attempt counter a counts from 0; a negative a counts as 0. Write
// base, cap and m for base_delay_s, max_delay_s and multiplier. The
// ceiling of attempt a is
//
//	ceiling(a) = min(cap, base * m^e)
//
// with e = a; with immediate_first_retry, ceiling(0) = 0 and e = a-1 for
// a >= 1. The exponent is clamped before the multiplication, to one more
// than the smallest e at which base * m^e reaches cap, so no attempt
// number, however large, overflows: the ceiling is finite, >= 0 and at
// most cap. m = 1 keeps it at base.
//
// Each rule draws the delay d from u, a number the caller draws uniformly
// from [0, 1), and from prev, the delay the device drew before (0 if
// none). [Policy.Draw] computes d, [Policy.Bounds] the interval [lo, hi]
// every draw lies in, and [Policy.Ceiling] the upper bound:
//
//	rule                 d                                lo                            hi             ceiling
//	none                 0                                0                             0              0
//	fixed                base                             base                          base           base
//	exponential          ceiling(a)                       ceiling(a)                    ceiling(a)     ceiling(a)
//	full_jitter          lo + u*(hi-lo)                   min(min_delay_s, ceiling(a))  ceiling(a)     ceiling(a)
//	equal_jitter         ceiling(a)/2 + u*ceiling(a)/2    ceiling(a)/2                  ceiling(a)     ceiling(a)
//	decorrelated_jitter  min(cap, base + u*(top - base))  min(base, cap)                min(cap, top)  cap
//
// where, for decorrelated_jitter, top = max(base, 3p) with p = prev if
// prev > 0, else base (the "decorrelated jitter" of the AWS Architecture
// Blog; a prev so small that 3p < base draws base). A draw is never above
// hi, even after rounding. For a valid policy every draw is finite and
// within its bounds.
//
// # Validation
//
// [Parse] rejects, with a [*SyntaxError] that keeps the parser's line, a
// file that is not valid TOML or JSON, and with a [*FieldError]
// ("FILE:LINE: FIELD: expected ..., found ...") an empty file, a JSON
// file that is not an object or holds a key twice, an unknown key (the
// message lists the known ones), a value of the wrong type, and a policy
// [Policy.Validate] rejects:
//
//   - delay missing, or not one of the rules;
//   - a number that is negative, NaN or infinite;
//   - multiplier below 1;
//   - base_delay_s missing for any rule but none; max_delay_s missing for
//     exponential, full_jitter, equal_jitter and decorrelated_jitter;
//     multiplier missing for exponential, full_jitter and equal_jitter;
//   - max_delay_s below base_delay_s, or min_delay_s above max_delay_s;
//   - connect_budget_window_s given and not > 0.
//
// A file that declares connect_budget_per_s > 0 without a window gets
// connect_budget_window_s = 1. [Policy.Declared] tells a declared key from
// a default.
//
// # Presets
//
// [PresetNames] lists the built-in policies and [Describe] says what each
// models: paho-go, paho-python and autopaho are those clients' defaults,
// full-jitter the well-behaved reference client, fixed and exponential
// the phase-locked timers of a classic reconnect storm. [Resolve] takes a
// file or a preset name, as a --policy flag does.
//
// # Example
//
// A fleet of the reference client, with the broker's accept budget:
//
//	name = "reference fleet"
//	delay = "full_jitter"
//	base_delay_s = 1
//	multiplier = 2
//	max_delay_s = 120
//	min_connect_spacing_s = 0.25
//	keepalive_s = 45
//	connect_budget_per_s = 200
//	clean_session = false
//
// [Policy.AppendTOML] and [Policy.AppendJSON] write a policy back as a file
// to start from; parsing their output gives back an equal policy.
package policy
