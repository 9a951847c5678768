package auditfmt

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// plainString marks the bytes that stand for themselves in a JSON string:
// printable ASCII other than '"' and '\\'.
var plainString = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipPlain returns the index of the first byte at or after i that does not
// stand for itself in a JSON string, or len(b). It looks at eight bytes at
// a time.
func skipPlain(b []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		q := x ^ (ones * '"')
		e := x ^ (ones * '\\')
		// A high bit marks a byte that is '"' or '\\' (zero after the
		// xor), a control character (< 0x20), or not ASCII. Only the
		// lowest mark is exact, and that is the one used.
		if m := ((q-ones)&^q | (e-ones)&^e | (x-ones*0x20)&^x | x) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(b) && plainString[b[i]] {
		i++
	}
	return i
}

// scanString checks the string whose opening quote is at i and returns the
// index after its closing quote and whether it has escapes. field names the
// member being read, if any.
func (d *Decoder) scanString(i int, field []byte) (end int, escaped bool, err error) {
	b := d.line
	j := i + 1
	for j < len(b) {
		j = skipPlain(b, j)
		if j == len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, escaped, nil
		case c == '\\':
			n, err := d.escapeLen(j, field)
			if err != nil {
				return j, false, err
			}
			j, escaped = j+n, true
		case c < 0x20:
			return j, false, d.syntaxError(field, "a string character (control characters must be escaped)", j)
		default:
			r, n := utf8.DecodeRune(b[j:])
			if r == utf8.RuneError && n == 1 {
				return j, false, d.syntaxError(field, "valid UTF-8", j)
			}
			j += n
		}
	}
	return j, false, d.syntaxError(field, "'\"' to end the string", j)
}

// escapeLen checks the escape sequence whose backslash is at i and returns
// its length.
func (d *Decoder) escapeLen(i int, field []byte) (int, error) {
	b := d.line
	if i+1 < len(b) {
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			return 2, nil
		case 'u':
			for k := i + 2; k < i+6; k++ {
				if k >= len(b) || hexValue(b[k]) < 0 {
					return 0, d.syntaxError(field, `four hex digits after \u`, k)
				}
			}
			return 6, nil
		}
	}
	return 0, d.syntaxError(field, `an escape sequence (\" \\ \/ \b \f \n \r \t or \uXXXX) after \`, i+1)
}

func hexValue(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// hex4 returns the value of the four hex digits s starts with.
func hex4(s []byte) rune {
	return hexValue(s[0])<<12 | hexValue(s[1])<<8 | hexValue(s[2])<<4 | hexValue(s[3])
}

// unescapeJSON appends the body of a JSON string whose escapes are known to
// be valid to dst, unescaped as encoding/json does it: a \u escape of a
// surrogate that is not half of a pair becomes U+FFFD.
func unescapeJSON(dst, s []byte) []byte {
	for len(s) > 0 {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			return append(dst, s...)
		}
		dst, s = append(dst, s[:k]...), s[k:]
		if s[1] != 'u' {
			dst, s = append(dst, unescapedByte(s[1])), s[2:]
			continue
		}
		r := hex4(s[2:])
		s = s[6:]
		if utf16.IsSurrogate(r) {
			r2 := utf8.RuneError
			if len(s) >= 6 && s[0] == '\\' && s[1] == 'u' {
				r2 = utf16.DecodeRune(r, hex4(s[2:]))
			}
			if r2 != utf8.RuneError {
				s = s[6:]
			}
			r = r2
		}
		dst = utf8.AppendRune(dst, r)
	}
	return dst
}

func unescapedByte(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // '"', '\\' and '/'
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
