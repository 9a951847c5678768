package front

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Formats are the output formats of check, in the order of its help.
var Formats = []string{"text", "json", "sarif", "junit", "github"}

// An Output is one format and where it goes: a path, or "-" for stdout.
type Output struct {
	Format, Path string
}

// ParseOutputs pairs formats (--format) with outputs (--output), both
// comma-separated lists. A format must be one of known. No format (an
// empty STORMAUDIT_FORMAT) is text; no output is stdout for each format,
// which is refused for more than one. Two outputs naming one file, as a
// path cleaned and made absolute (a.json and ./a.json), are refused.
func ParseOutputs(formats, outputs string, known []string) ([]Output, error) {
	fs := splitList(formats)
	if len(fs) == 0 {
		fs = []string{"text"}
	}
	for _, f := range fs {
		if !slices.Contains(known, f) {
			return nil, fmt.Errorf("check: --format: expected %s, found %q", orList(known), f)
		}
	}
	ps := splitList(outputs)
	if outputs == "" {
		ps = slices.Repeat([]string{"-"}, len(fs))
	}
	if len(ps) != len(fs) {
		return nil, fmt.Errorf("check: --output: expected one path per format (%d), found %d", len(fs), len(ps))
	}
	outs := make([]Output, len(fs))
	same := make([]string, len(ps)) // the paths as files: ./a and a are one file
	for i, p := range ps {
		same[i] = p
		if abs, err := filepath.Abs(p); p != "-" && err == nil {
			same[i] = abs
		}
	}
	for i := range fs {
		if slices.Contains(same[:i], same[i]) {
			if ps[i] == "-" {
				return nil, fmt.Errorf("check: --output: %s and %s both go to stdout; give --output a file for all but one", fs[slices.Index(ps, "-")], fs[i])
			}
			return nil, fmt.Errorf("check: --output: %s is given twice", ps[i])
		}
		outs[i] = Output{fs[i], ps[i]}
	}
	return outs, nil
}

// Paths returns the paths of outs, "-" included.
func Paths(outs []Output) []string {
	ps := make([]string, len(outs))
	for i, o := range outs {
		ps[i] = o.Path
	}
	return ps
}

// splitList splits a comma-separated list, trimming spaces.
func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// orList writes words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
