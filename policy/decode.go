package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// decodeJSON decodes a JSON object member by member, so that it can note
// the line of each key and reject a key that appears twice.
func decodeJSON(data []byte) (*document, error) {
	d := &document{format: "JSON", values: map[string]any{}, lines: map[string]int{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	lines := &lineCounter{data: data, line: 1}
	syntax := func(err error) error { return jsonSyntaxError(lines, dec.InputOffset(), err) }
	tok, err := dec.Token()
	if err != nil {
		return d, syntax(err)
	}
	if tok != json.Delim('{') {
		return d, &FieldError{Line: lines.at(dec.InputOffset()), Expected: "a JSON object", Found: jsonKind(tok)}
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return d, syntax(err)
		}
		name, _ := tok.(string) // the decoder accepts only a string here
		line := lines.at(dec.InputOffset())
		var v any
		if err := dec.Decode(&v); err != nil {
			return d, syntax(err)
		}
		if first, dup := d.lines[name]; dup {
			return d, &FieldError{Line: line, Field: name, Expected: "each key once", Found: "it again (first on line " + strconv.Itoa(first) + ")"}
		}
		d.values[name], d.lines[name] = v, line
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return d, syntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("expected the end of the file after the object")
		}
		return d, syntax(err)
	}
	return d, nil
}

// jsonSyntaxError places a JSON decoder's error at its line; off is where
// the decoder stopped.
func jsonSyntaxError(lines *lineCounter, off int64, err error) error {
	msg := err.Error()
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		off, msg = int64(len(lines.data)), "unexpected end of JSON input"
	}
	return &SyntaxError{Line: lines.at(off), Format: "JSON", Msg: msg, Err: err}
}

// jsonKind names the first token of a JSON value.
func jsonKind(tok json.Token) string {
	switch tok {
	case json.Delim('['):
		return "an array"
	case nil:
		return "null"
	}
	if _, ok := tok.(string); ok {
		return "a string"
	}
	if _, ok := tok.(bool); ok {
		return "a boolean"
	}
	return "a number"
}

// lineCounter turns byte offsets into 1-based line numbers, counting
// from the previous offset when offsets increase, as a decoder's do.
type lineCounter struct {
	data []byte
	off  int64 // the offset of the last call
	line int   // the line of off
}

func (c *lineCounter) at(off int64) int {
	off = min(max(off, 0), int64(len(c.data)))
	if off < c.off {
		c.off, c.line = 0, 1
	}
	c.line += bytes.Count(c.data[c.off:off], []byte("\n"))
	c.off = off
	return c.line
}

// decodeTOML decodes a TOML document; the toml package rejects duplicate
// keys and reports the line of a syntax error.
func decodeTOML(data []byte) (*document, error) {
	d := &document{format: "TOML", values: map[string]any{}, lines: tomlKeyLines(data)}
	if _, err := toml.Decode(string(data), &d.values); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return d, &SyntaxError{Line: pe.Position.Line, Format: "TOML", Msg: pe.Message, Err: pe}
		}
		return d, &SyntaxError{Format: "TOML", Msg: err.Error(), Err: err}
	}
	return d, nil
}

// tomlKeyLines finds the line of each top-level key of a TOML document,
// for error messages: the first line outside a multi-line string that
// assigns the key (key = ..., or a dotted key.sub = ...) before the first
// table header, or the first table header naming it ([key] or [[key]]).
// The toml package keeps the positions of keys to itself.
func tomlKeyLines(data []byte) map[string]int {
	lines := map[string]int{}
	open, inTable := "", false // open: the delimiter of a multi-line string still open
	for i, line := range strings.Split(string(data), "\n") {
		s := strings.TrimSpace(line)
		if open == "" {
			name, ok := "", false
			if rest, header := strings.CutPrefix(s, "["); header {
				inTable = true
				name, ok = leadingKey(strings.TrimPrefix(rest, "["), "].")
			} else if !inTable {
				name, ok = leadingKey(s, "=.")
			}
			if _, seen := lines[name]; ok && !seen {
				lines[name] = i + 1
			}
		}
		open = scanTOMLLine(line, open)
	}
	return lines
}

// scanTOMLLine returns the delimiter (""" or ”') of the multi-line
// string open at the end of line, or "" for none, given the one open at
// its start. It skips comments and single-line strings, whose quotes
// open nothing.
func scanTOMLLine(line, open string) string {
	for i := 0; i < len(line); {
		if open != "" {
			j := strings.Index(line[i:], open)
			if j < 0 {
				return open
			}
			i, open = i+j+3, ""
			continue
		}
		switch rest := line[i:]; {
		case rest[0] == '#':
			return ""
		case strings.HasPrefix(rest, `"""`), strings.HasPrefix(rest, `'''`):
			open, i = rest[:3], i+3
		case rest[0] == '"' || rest[0] == '\'':
			q := rest[0]
			for i++; i < len(line) && line[i] != q; i++ {
				if q == '"' && line[i] == '\\' {
					i++ // an escaped character
				}
			}
			i++
		default:
			i++
		}
	}
	return open
}

// leadingKey returns the bare or quoted key at the start of s, if white
// space and then one of the bytes in end follow it.
func leadingKey(s, end string) (string, bool) {
	s = strings.TrimLeft(s, " \t")
	var name string
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		j := strings.IndexByte(s[1:], s[0])
		if j < 0 {
			return "", false
		}
		name, s = s[1:1+j], s[2+j:]
	} else {
		j := strings.IndexFunc(s, func(r rune) bool {
			return !(r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
		})
		if j <= 0 {
			return "", false
		}
		name, s = s[:j], s[j:]
	}
	s = strings.TrimLeft(s, " \t")
	return name, s != "" && strings.IndexByte(end, s[0]) >= 0
}
