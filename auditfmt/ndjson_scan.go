package auditfmt

import (
	"bytes"
	"strconv"

	"github.com/stormaudit/stormaudit/internal/jsonstr"
)

// scanString checks the string whose opening quote is at i and returns the
// index after its closing quote and whether it has escapes. field names the
// member being read, if any. The record format asks for UTF-8; a lone
// surrogate is let through, and unescapes to U+FFFD as encoding/json has it.
func (d *Decoder) scanString(i int, field []byte) (end int, escaped bool, err error) {
	end, escaped, serr := jsonstr.Scan(d.line, i, jsonstr.UTF8)
	if serr == nil {
		return end, escaped, nil
	}
	var expected string
	switch serr.Kind {
	case jsonstr.Unterminated:
		expected = "'\"' to end the string"
	case jsonstr.Control:
		expected = "a string character (control characters must be escaped)"
	case jsonstr.BadUTF8:
		expected = "valid UTF-8"
	case jsonstr.BadHex:
		expected = `four hex digits after \u`
	default: // jsonstr.BadEscape
		expected = `an escape sequence (\" \\ \/ \b \f \n \r \t or \uXXXX) after \`
	}
	return end, false, d.syntaxError(field, expected, serr.Offset)
}

// scanNumber checks the JSON number at i and returns the index after it and
// whether it is an integer (no fraction, no exponent).
func (d *Decoder) scanNumber(i int, field []byte) (end int, isInt bool, err error) {
	b := d.line
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && isDigit(b[j]):
		j = skipDigits(b, j+1)
	default:
		return j, false, d.syntaxError(field, "a digit", j)
	}
	isInt = true
	if j < len(b) && b[j] == '.' {
		isInt = false
		if j++; j >= len(b) || !isDigit(b[j]) {
			return j, false, d.syntaxError(field, "a digit after the decimal point", j)
		}
		j = skipDigits(b, j+1)
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		isInt = false
		if j++; j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || !isDigit(b[j]) {
			return j, false, d.syntaxError(field, "a digit in the exponent", j)
		}
		j = skipDigits(b, j+1)
	}
	return j, isInt, nil
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// skipValue checks the JSON value at i, the value of member field of an
// object at nesting depth depth, and returns the index after it.
func (d *Decoder) skipValue(i int, field []byte, depth int) (int, error) {
	b := d.line
	stack := d.stack[:0]
	defer func() { d.stack = stack }()
	var err error
	for {
		// A value starts at i.
		if i < len(b) && (b[i] == '{' || b[i] == '[') {
			if depth+len(stack) >= maxNesting {
				return i, d.syntaxError(field, "at most "+strconv.Itoa(maxNesting)+" levels of nesting", i)
			}
			stack = append(stack, b[i]+2) // '}' or ']'
			empty := false
			if i, empty, err = d.openContainer(i, field, stack[len(stack)-1]); err != nil {
				return i, err
			} else if !empty {
				continue // the container's first element
			}
			stack, i = stack[:len(stack)-1], i+1
		} else if i, err = d.scalar(i, field); err != nil {
			return i, err
		}
		// A value ends before i: close what it completes.
		more := false
		for !more && len(stack) > 0 {
			if i, more, err = d.afterElement(i, field, stack[len(stack)-1]); err != nil {
				return i, err
			} else if !more {
				stack, i = stack[:len(stack)-1], i+1
			}
		}
		if !more {
			return i, nil
		}
	}
}

// openContainer reads past the '{' or '[' at i and, for a non-empty object,
// past its first member name. It returns the index of the first element,
// or of the closing bracket and empty.
func (d *Decoder) openContainer(i int, field []byte, closer byte) (next int, empty bool, err error) {
	b := d.line
	i = skipSpace(b, i+1)
	switch {
	case i < len(b) && b[i] == closer:
		return i, true, nil
	case closer == ']':
		return i, false, nil
	}
	i, err = d.nestedName(i, field, true)
	return i, false, err
}

// afterElement reads what follows an element of a container whose closing
// bracket is closer: a ',' (it returns the index of the next element, and
// more) or the closing bracket (it returns its index).
func (d *Decoder) afterElement(i int, field []byte, closer byte) (int, bool, error) {
	b := d.line
	i = skipSpace(b, i)
	switch {
	case i < len(b) && b[i] == closer:
		return i, false, nil
	case i < len(b) && b[i] == ',' && closer == ']':
		return skipSpace(b, i+1), true, nil
	case i < len(b) && b[i] == ',':
		i, err := d.nestedName(skipSpace(b, i+1), field, false)
		return i, true, err
	case closer == ']':
		return i, false, d.syntaxError(field, "',' or ']' in an array", i)
	}
	return i, false, d.syntaxError(field, "',' or '}' in an object", i)
}

// nestedName reads a member name of an object inside the value of member
// field, and the ':' after it, and returns the index of the member's value.
func (d *Decoder) nestedName(i int, field []byte, first bool) (int, error) {
	b := d.line
	if i >= len(b) || b[i] != '"' {
		if first {
			return i, d.syntaxError(field, "a member name (a string) or '}'", i)
		}
		return i, d.syntaxError(field, "a member name (a string)", i)
	}
	end, _, err := d.scanString(i, field)
	if err != nil {
		return end, err
	}
	j := skipSpace(b, end)
	if j >= len(b) || b[j] != ':' {
		return j, d.syntaxError(field, "':' after a member name", j)
	}
	return skipSpace(b, j+1), nil
}

// scalar checks the string, number or literal at i and returns the index
// after it.
func (d *Decoder) scalar(i int, field []byte) (int, error) {
	b := d.line
	if tok := nonFinite(b, i); tok != "" {
		d.hard = true
		return i, &FieldError{Field: string(field), Expected: "a JSON value", Found: tok}
	}
	if i >= len(b) {
		return i, d.syntaxError(field, "a JSON value", i)
	}
	switch c := b[i]; {
	case c == '"':
		end, _, err := d.scanString(i, field)
		return end, err
	case c == '-' || isDigit(c):
		end, _, err := d.scanNumber(i, field)
		return end, err
	}
	for _, lit := range [...][]byte{literalTrue, literalFalse, literalNull} {
		if bytes.HasPrefix(b[i:], lit) {
			return i + len(lit), nil
		}
	}
	return i, d.syntaxError(field, "a JSON value", i)
}

// decimalFloat parses the common numbers quickly: no sign, no exponent, at
// most 15 digits and so exactly a float64 once the point is dropped, at
// most 22 of them after the point, so that the result is that integer
// divided by an exact power of ten, correctly rounded (as strconv does it).
// It reports false for other numbers.
func decimalFloat(s []byte) (float64, bool) {
	var mant uint64
	digits, point := 0, -1
	for k, c := range s {
		switch {
		case isDigit(c):
			mant = mant*10 + uint64(c-'0')
			digits++
		case c == '.':
			point = k
		default:
			return 0, false
		}
	}
	if digits > 15 {
		return 0, false
	}
	if point < 0 {
		return float64(mant), true
	}
	return float64(mant) / exactPowersOfTen[len(s)-point-1], true
}

// exactPowersOfTen are the powers of ten a float64 holds exactly.
var exactPowersOfTen = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}
