package policy

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// FieldError says what is wrong with one key of a policy file.
type FieldError struct {
	File     string // the file's name as the caller gave it; "" for a Policy built in Go
	Line     int    // 1-based line of the key in the file; 0 if unknown (a missing key)
	Field    string // the key, for example "max_delay_s"; "" for the file as a whole
	Expected string // what the format expects, for example "at least base_delay_s (1)"
	Found    string // what the file held, for example "0.5" or "nothing"
}

// Error returns "FILE:LINE: FIELD: expected EXPECTED, found FOUND", without
// the parts that are empty or zero.
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString("expected " + e.Expected)
	if e.Found != "" {
		b.WriteString(", found " + clipFound(e.Found))
	}
	return b.String()
}

// maxFound is how much of what was found an error message repeats: a
// value of a megabyte is no message.
const maxFound = 200

// clipFound returns found cut to maxFound bytes (at a character), saying
// how long it was.
func clipFound(found string) string {
	if len(found) <= maxFound {
		return found
	}
	cut := maxFound
	for cut > 0 && !utf8.RuneStart(found[cut]) {
		cut--
	}
	return found[:cut] + fmt.Sprintf("... (%d bytes)", len(found))
}

// SyntaxError is a file that is not valid TOML or JSON, with the line the
// parser gives.
type SyntaxError struct {
	File   string // the file's name as the caller gave it
	Line   int    // 1-based line; 0 if the parser gave none
	Format string // "TOML" or "JSON"
	Msg    string // the parser's message
	Err    error  // the parser's error: a toml.ParseError, a *json.SyntaxError, or another decoder error
}

// Error returns "FILE:LINE: invalid FORMAT: MSG".
func (e *SyntaxError) Error() string {
	pos := e.File
	if e.Line > 0 {
		pos += ":" + strconv.Itoa(e.Line)
	}
	return pos + ": invalid " + e.Format + ": " + e.Msg
}

// Unwrap returns the parser's error.
func (e *SyntaxError) Unwrap() error { return e.Err }

// Validate checks p against the rules of the file format and returns the
// first problem as a *FieldError (File and Line are left empty; Parse
// fills them in). A key counts as given when the file declared it or, for
// a Policy built in Go, when its field is not zero.
func (p *Policy) Validate() error {
	if err := p.validateDelay(); err != nil {
		return err
	}
	if err := p.validateNumbers(); err != nil {
		return err
	}
	if err := p.validateRequired(); err != nil {
		return err
	}
	return p.validateRelations()
}

func (p *Policy) validateDelay() error {
	expected := "one of " + strings.Join(ruleNames(), ", ")
	if !p.given(keyDelay) {
		return &FieldError{Field: keyDelay, Expected: expected, Found: "nothing"}
	}
	for _, r := range rules {
		if p.Delay == r {
			return nil
		}
	}
	found := strconv.Quote(string(p.Delay))
	for _, r := range rules { // full-jitter, Full_Jitter: the preset's spelling, another case
		if strings.EqualFold(strings.ReplaceAll(string(p.Delay), "-", "_"), string(r)) {
			found += " (did you mean " + string(r) + "?)"
		}
	}
	return &FieldError{Field: keyDelay, Expected: expected, Found: found}
}

func ruleNames() []string {
	names := make([]string, len(rules))
	for i, r := range rules {
		names[i] = string(r)
	}
	return names
}

// validateNumbers checks that every number is finite and >= 0.
func (p *Policy) validateNumbers() error {
	for _, k := range keys {
		if k.kind != reflect.Float64 {
			continue
		}
		if f := p.value(k).Float(); !(f >= 0) || math.IsInf(f, 1) {
			return &FieldError{Field: k.name, Expected: "a finite number >= 0", Found: formatFloat(f)}
		}
	}
	return nil
}

// requires lists the keys each delay rule uses, which a file must give.
var requires = map[Rule][]string{
	Fixed:        {"base_delay_s"},
	Exponential:  {"base_delay_s", "max_delay_s", "multiplier"},
	FullJitter:   {"base_delay_s", "max_delay_s", "multiplier"},
	EqualJitter:  {"base_delay_s", "max_delay_s", "multiplier"},
	Decorrelated: {"base_delay_s", "max_delay_s"},
}

// expectedOf says what a required key must hold.
var expectedOf = map[string]string{
	"base_delay_s": "a number of seconds >= 0",
	"max_delay_s":  "a number of seconds >= base_delay_s",
	"multiplier":   "a number >= 1",
}

// validateRequired checks that the keys the delay rule uses are given.
func (p *Policy) validateRequired() error {
	for _, name := range requires[p.Delay] {
		if !p.given(name) {
			return &FieldError{Field: name, Expected: expectedOf[name] + " (delay " + string(p.Delay) + " uses it)", Found: "nothing"}
		}
	}
	return nil
}

// validateRelations checks the keys against each other.
func (p *Policy) validateRelations() error {
	switch {
	case p.given("multiplier") && p.Multiplier < 1:
		return &FieldError{Field: "multiplier", Expected: "at least 1 (1 keeps the delay at base_delay_s)", Found: formatFloat(p.Multiplier)}
	case p.given("max_delay_s") && p.MaxDelayS < p.BaseDelayS:
		return &FieldError{Field: "max_delay_s", Expected: "at least base_delay_s (" + formatFloat(p.BaseDelayS) + ")", Found: formatFloat(p.MaxDelayS)}
	case p.given("max_delay_s") && p.MinDelayS > p.MaxDelayS:
		return &FieldError{Field: "min_delay_s", Expected: "at most max_delay_s (" + formatFloat(p.MaxDelayS) + ")", Found: formatFloat(p.MinDelayS)}
	case p.OutboxLimit != math.Trunc(p.OutboxLimit) || p.OutboxLimit > 1<<53:
		return &FieldError{Field: "outbox_limit", Expected: "a whole number of messages, at most 2^53", Found: formatFloat(p.OutboxLimit)}
	case p.StartupSpreadS > 30*24*3600:
		return &FieldError{Field: "startup_spread_s", Expected: "a number of seconds up to 2592000 (30 days)", Found: formatFloat(p.StartupSpreadS)}
	case p.given(keyWindow) && p.ConnectBudgetWindowS <= 0:
		return &FieldError{Field: keyWindow, Expected: "a number of seconds > 0", Found: formatFloat(p.ConnectBudgetWindowS)}
	}
	return nil
}

// formatFloat writes f as the shortest decimal that reads back as f: plain
// for 1e-4 <= |f| < 1e15 (integers without a fraction), with an exponent
// otherwise, so that no integer literal is too large for TOML's int64.
func formatFloat(f float64) string {
	if a := math.Abs(f); a == 0 || (a >= 1e-4 && a < 1e15) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
