package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/stormaudit/stormaudit/internal/sidefile"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Parse reads the policy file named name (the name is used to choose the
// format and in errors). The format is JSON for a name ending in .json,
// TOML for one ending in .toml, and otherwise JSON when the first byte
// that is not white space is '{', TOML if not. A leading UTF-8 byte order
// mark is ignored. The policy is validated; every error is a *SyntaxError
// or a *FieldError naming the file and, where it is known, the line.
func Parse(name string, data []byte) (Policy, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if len(bytes.TrimSpace(data)) == 0 {
		return Policy{}, &FieldError{File: name, Expected: "a reconnect policy (at least the key delay)", Found: "an empty file"}
	}
	var d *document
	var err error
	if isJSON(name, data) {
		d, err = decodeJSON(data)
	} else {
		d, err = decodeTOML(data)
	}
	var p Policy
	if err == nil {
		p, err = d.policy()
	}
	if err == nil {
		err = p.Validate()
	}
	if err != nil {
		return Policy{}, d.locate(err, name)
	}
	return p, nil
}

// Load reads and parses the policy file at path.
func Load(path string) (Policy, error) {
	data, err := sidefile.Read(path, sidefile.MaxText)
	if err != nil {
		return Policy{}, err
	}
	if err := sidefile.CheckNesting(path, data); err != nil {
		return Policy{}, err
	}
	return Parse(path, data)
}

// Resolve returns the policy arg names: the file at path arg if there is
// one (a file wins over a preset of the same name), else the preset named
// arg. The error for neither lists the presets.
func Resolve(arg string) (Policy, error) {
	st, err := os.Stat(arg)
	if err == nil && !st.IsDir() {
		return Load(arg)
	}
	if p, perr := Preset(arg); perr == nil {
		return p, nil
	}
	found := "neither"
	switch {
	case err == nil:
		found = "a directory"
	case !errors.Is(err, fs.ErrNotExist):
		return Policy{}, err
	}
	return Policy{}, fmt.Errorf("%s: expected a policy file or a preset (%s), found %s", arg, strings.Join(PresetNames(), ", "), found)
}

func isJSON(name string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return true
	case ".toml":
		return false
	}
	s := bytes.TrimLeft(data, " \t\r\n")
	return len(s) > 0 && s[0] == '{'
}

// document is a decoded file: its top-level keys with their values as the
// decoder gave them (string, bool, int64, float64, json.Number, nil, []any,
// map[string]any, a TOML date-time), and the line of each key.
type document struct {
	format string // "TOML" or "JSON"
	values map[string]any
	lines  map[string]int
}

// locate fills in the file name and the line of the field an error of
// this document names.
func (d *document) locate(err error, name string) error {
	var fe *FieldError
	var se *SyntaxError
	switch {
	case errors.As(err, &fe):
		fe.File = name
		if fe.Line == 0 && d != nil {
			fe.Line = d.lines[fe.Field]
		}
	case errors.As(err, &se):
		se.File = name
	}
	return err
}

// policy sets a Policy from the document's values. It rejects unknown keys
// and values of the wrong type.
func (d *document) policy() (Policy, error) {
	var p Policy
	if len(d.values) == 0 {
		return p, &FieldError{Expected: "a reconnect policy (at least the key delay)", Found: "no keys"}
	}
	if unknown := d.unknownKeys(); len(unknown) > 0 {
		found := "an unknown key"
		if near := nearKey(unknown[0]); near != "" {
			found += " (did you mean " + near + "?)"
		}
		return p, &FieldError{Field: unknown[0], Expected: "one of the keys " + strings.Join(keyNames(), ", "), Found: found}
	}
	for i, k := range keys {
		v, ok := d.values[k.name]
		if !ok {
			continue
		}
		if !set(p.value(k), v) {
			return p, &FieldError{Field: k.name, Expected: expectedType(k), Found: d.describe(v)}
		}
		p.declare(i)
	}
	p.applyDefaults()
	return p, nil
}

// unknownKeys returns the keys of the document that are not keys of the
// format, in the order of their lines.
func (d *document) unknownKeys() []string {
	var unknown []string
	for name := range d.values {
		if lookup(name) < 0 {
			unknown = append(unknown, name)
		}
	}
	slices.SortFunc(unknown, func(a, b string) int {
		if la, lb := d.lines[a], d.lines[b]; la != lb {
			return la - lb
		}
		return strings.Compare(a, b)
	})
	return unknown
}

// nearKey returns the key that name most likely misspells: the same but
// for case, '-' for '_', or the unit suffix _s; "" if none.
func nearKey(name string) string {
	norm := func(s string) string {
		return strings.TrimSuffix(strings.ReplaceAll(strings.ToLower(s), "-", "_"), "_s")
	}
	for _, k := range keys {
		if norm(k.name) == norm(name) {
			return k.name
		}
	}
	return ""
}

// set stores v in the field f, converting integers and numbers to float64
// (and -0 to 0). It reports false when v has the wrong type for f.
func set(f reflect.Value, v any) bool {
	switch f.Kind() {
	case reflect.Float64:
		x, ok := toFloat(v)
		if ok {
			f.SetFloat(x + 0) // -0 + 0 is 0
		}
		return ok
	case reflect.Bool:
		b, ok := v.(bool)
		f.SetBool(b)
		return ok
	case reflect.String:
		s, ok := v.(string)
		f.SetString(s)
		return ok
	}
	return false
}

// toFloat converts a decoded number. A JSON number beyond the range of
// float64 becomes ±Inf, which validation rejects.
func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil || math.IsInf(f, 0)
	}
	return 0, false
}

func expectedType(k key) string {
	switch {
	case k.name == keyDelay:
		return "a string, one of " + strings.Join(ruleNames(), ", ")
	case k.kind == reflect.Float64:
		return "a number"
	case k.kind == reflect.Bool:
		return "true or false"
	}
	return "a string"
}

// describe names a value of the wrong type for an error message.
func (d *document) describe(v any) string {
	switch x := v.(type) {
	case string:
		const max = 40
		if len(x) > max {
			return "a string " + strconv.Quote(x[:max]) + "..."
		}
		return "a string " + strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	case map[string]any:
		if d.format == "JSON" {
			return "an object"
		}
		return "a table"
	}
	if f, ok := toFloat(v); ok {
		return "the number " + formatFloat(f)
	}
	if reflect.ValueOf(v).Kind() == reflect.Slice {
		return "an array"
	}
	return "a date-time"
}
