package hashchain

import (
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
)

// maxDepth is how deeply arrays and objects may nest: the limit
// encoding/json applies.
const maxDepth = 10000

// AppendCanonicalJSON appends the RFC 8785 (JSON Canonicalization Scheme)
// serialisation of the JSON text v to dst.
//
// v is any JSON value, with any insignificant whitespace around and inside
// it. The result has no whitespace; object members are sorted by their
// names compared as arrays of UTF-16 code units; numbers are IEEE 754
// doubles written as ECMAScript's Number.prototype.toString writes them;
// strings escape only '"', '\\' and the control characters U+0000 to
// U+001F (as \b, \t, \n, \f, \r or \u00xx), everything else is literal
// UTF-8.
//
// As RFC 8785 requires (it accepts I-JSON, RFC 7493), v must be valid
// UTF-8, its strings must not hold lone surrogates (\ud800 without a low
// surrogate after it), an object must not name a member twice, and every
// number must be within the range of a double (1e400 is an error; 1e-400
// is 0). A number is rounded to the nearest double, as JSON.parse does:
// 0.1000000000000000055511151231257827 becomes 0.1. Errors are
// *JSONError values; on error dst is returned as it was.
func AppendCanonicalJSON(dst []byte, v []byte) ([]byte, error) {
	c := getCanonicalizer(v, false)
	defer putCanonicalizer(c)
	out, err := c.document(dst)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// JSONError says why a JSON text has no canonical form.
type JSONError struct {
	Offset   int    // the 0-based byte offset in the text where the problem is
	Expected string // what RFC 8785 requires there
	Found    string // what the text holds there
}

// Error says where the text breaks RFC 8785 and how.
func (e *JSONError) Error() string {
	return "byte " + strconv.Itoa(e.Offset+1) + ": expected " + e.Expected + ", found " + e.Found
}

// A canonicalizer holds the state and scratch space of one canonicalisation.
type canonicalizer struct {
	in    []byte
	exact bool // numbers must be exactly a double's shortest decimal (record bytes)
	depth int

	open   []member // the members of the objects being read, innermost last
	names  []byte   // their names, unescaped
	member []byte   // the name of the top-level member being read, for errors
	tmp    []byte   // scratch for reordering members
	str    []byte   // scratch: the string being read, unescaped
	digits []byte   // scratch for checking that numbers are exact
	src    []byte   // a copy of the text of Extra or Envelope (record bytes)
	ext    []byte   // the canonical members of Extra (record bytes)
}

// A member is one member of an object: its unescaped name in
// canonicalizer.names and its canonical `"name":value` in the output.
type member struct {
	nameStart, nameEnd int
	start, end         int
}

var canonicalizers = sync.Pool{New: func() any { return new(canonicalizer) }}

func getCanonicalizer(in []byte, exact bool) *canonicalizer {
	c := canonicalizers.Get().(*canonicalizer)
	c.in, c.exact, c.depth, c.member = in, exact, 0, c.member[:0]
	return c
}

func putCanonicalizer(c *canonicalizer) {
	c.in = nil
	c.open, c.names = c.open[:0], c.names[:0]
	canonicalizers.Put(c)
}

// document canonicalises c.in, which must hold exactly one JSON value.
func (c *canonicalizer) document(dst []byte) ([]byte, error) {
	i := skipSpace(c.in, 0)
	dst, i, err := c.value(dst, i)
	if err != nil {
		return dst, err
	}
	if i = skipSpace(c.in, i); i != len(c.in) {
		return dst, c.errorAt(i, "the end of the text after the value")
	}
	return dst, nil
}

// value canonicalises the JSON value at i and returns the index after it.
func (c *canonicalizer) value(dst []byte, i int) ([]byte, int, error) {
	if i >= len(c.in) {
		return dst, i, c.errorAt(i, "a JSON value")
	}
	switch ch := c.in[i]; {
	case ch == '{':
		return c.object(dst, i)
	case ch == '[':
		return c.array(dst, i)
	case ch == '"':
		end, err := c.string(i)
		if err != nil {
			return dst, end, err
		}
		return appendJSONBytes(dst, c.str), end, nil
	case ch == '-' || isDigit(ch):
		return c.number(dst, i)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(c.in)-i >= len(lit) && string(c.in[i:i+len(lit)]) == lit {
			return append(dst, lit...), i + len(lit), nil
		}
	}
	return dst, i, c.errorAt(i, "a JSON value")
}

// enter counts one more level of nesting for the container at i.
func (c *canonicalizer) enter(i int) error {
	if c.depth++; c.depth > maxDepth {
		return &JSONError{Offset: i, Expected: "at most " + strconv.Itoa(maxDepth) + " levels of nesting", Found: "more"}
	}
	return nil
}

// array canonicalises the array at i.
func (c *canonicalizer) array(dst []byte, i int) ([]byte, int, error) {
	if err := c.enter(i); err != nil {
		return dst, i, err
	}
	dst = append(dst, '[')
	i = skipSpace(c.in, i+1)
	if i < len(c.in) && c.in[i] == ']' {
		c.depth--
		return append(dst, ']'), i + 1, nil
	}
	for {
		var err error
		if dst, i, err = c.value(dst, i); err != nil {
			return dst, i, err
		}
		i = skipSpace(c.in, i)
		if i >= len(c.in) || (c.in[i] != ',' && c.in[i] != ']') {
			return dst, i, c.errorAt(i, "',' or ']' after an array element")
		}
		if c.in[i] == ']' {
			c.depth--
			return append(dst, ']'), i + 1, nil
		}
		dst = append(dst, ',')
		i = skipSpace(c.in, i+1)
	}
}

// object canonicalises the object at i.
func (c *canonicalizer) object(dst []byte, i int) ([]byte, int, error) {
	if err := c.enter(i); err != nil {
		return dst, i, err
	}
	dst = append(dst, '{')
	start, base, names := len(dst), len(c.open), len(c.names)
	dst, i, err := c.members(dst, i+1)
	if err != nil {
		return dst, i, err
	}
	dst = c.reorder(dst, start, c.open[base:])
	c.open, c.names = c.open[:base], c.names[:names]
	c.depth--
	return append(dst, '}'), i, nil
}

// members reads the members of an object from i, just after its '{', to
// the index after its '}'. It appends them to dst in the order read,
// separated by commas, and to c.open sorted and checked for duplicates.
func (c *canonicalizer) members(dst []byte, i int) ([]byte, int, error) {
	base := len(c.open)
	i = skipSpace(c.in, i)
	if i < len(c.in) && c.in[i] == '}' {
		return dst, i + 1, nil
	}
	for {
		if i >= len(c.in) || c.in[i] != '"' {
			return dst, i, c.errorAt(i, "a member name (a string)")
		}
		nameAt := i
		var err error
		if i, err = c.string(i); err != nil {
			return dst, i, err
		}
		if i = skipSpace(c.in, i); i >= len(c.in) || c.in[i] != ':' {
			return dst, i, c.errorAt(i, "':' after a member name")
		}
		if len(c.open) > base {
			dst = append(dst, ',')
		}
		m := member{nameStart: len(c.names), start: len(dst)}
		c.names = append(c.names, c.str...)
		m.nameEnd = len(c.names)
		if c.depth == 1 {
			c.member = append(c.member[:0], c.str...)
		}
		dst = appendJSONBytes(dst, c.str)
		dst = append(dst, ':')
		if dst, i, err = c.value(dst, skipSpace(c.in, i+1)); err != nil {
			return dst, i, err
		}
		m.end = len(dst)
		c.open = append(c.open, m)
		if i = skipSpace(c.in, i); i >= len(c.in) || (c.in[i] != ',' && c.in[i] != '}') {
			return dst, i, c.errorAt(i, "',' or '}' after a member")
		}
		if c.in[i] == '}' {
			return dst, i + 1, c.sortMembers(c.open[base:], nameAt)
		}
		i = skipSpace(c.in, i+1)
	}
}

// sortMembers sorts the members of one object by name and checks that no
// name appears twice. at is where the last member's name starts, for the
// error.
func (c *canonicalizer) sortMembers(ms []member, at int) error {
	sorted := true
	for k := 1; k < len(ms) && sorted; k++ {
		sorted = c.compareNames(ms[k-1], ms[k]) < 0
	}
	if sorted {
		return nil
	}
	slices.SortStableFunc(ms, c.compareNames)
	for k := 1; k < len(ms); k++ {
		if c.compareNames(ms[k-1], ms[k]) == 0 {
			name := c.names[ms[k].nameStart:ms[k].nameEnd]
			return &JSONError{Offset: at, Expected: "each member name once in an object", Found: "a second " + strconv.Quote(string(name))}
		}
	}
	return nil
}

func (c *canonicalizer) compareNames(a, b member) int {
	return compareUTF16(c.names[a.nameStart:a.nameEnd], c.names[b.nameStart:b.nameEnd])
}

// reorder rewrites the members written from start in the order of ms,
// which holds them sorted.
func (c *canonicalizer) reorder(dst []byte, start int, ms []member) []byte {
	inOrder := true
	for k := 1; k < len(ms) && inOrder; k++ {
		inOrder = ms[k-1].start < ms[k].start
	}
	if inOrder {
		return dst
	}
	c.tmp = append(c.tmp[:0], dst[start:]...)
	dst = dst[:start]
	for k, m := range ms {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, c.tmp[m.start-start:m.end-start]...)
	}
	return dst
}

// errorAt returns the error for what the text holds at i.
func (c *canonicalizer) errorAt(i int, expected string) error {
	return &JSONError{Offset: i, Expected: expected, Found: describeAt(c.in, i)}
}

// describeAt describes the character at i of b for an error message.
func describeAt(b []byte, i int) string {
	if i >= len(b) {
		return "the end of the text"
	}
	r, n := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError && n == 1 {
		return "the byte 0x" + strconv.FormatUint(uint64(b[i]), 16) + " (not UTF-8)"
	}
	return strconv.QuoteRune(r)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
