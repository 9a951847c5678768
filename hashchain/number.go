package hashchain

import (
	"bytes"
	"math"
	"strconv"
)

// number canonicalises the JSON number at i.
func (c *canonicalizer) number(dst []byte, i int) ([]byte, int, error) {
	end, ok := scanNumber(c.in, i)
	if !ok {
		return dst, end, c.errorAt(end, "a digit")
	}
	text := c.in[i:end]
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil { // the syntax is checked: only overflow is left
		return dst, i, &JSONError{Offset: i, Expected: "a number within the range of an IEEE 754 double", Found: clip(text)}
	}
	if c.exact && !c.exactDouble(text, f) {
		return dst, i, &JSONError{Offset: i, Expected: exactExpected, Found: clip(text)}
	}
	return appendES6(dst, f), end, nil
}

const exactExpected = "a number that an IEEE 754 double holds exactly, at most 17 significant digits (write longer numbers as strings)"

// scanNumber checks the syntax of the JSON number at i and returns the
// index after it, or the index of the offending byte.
func scanNumber(b []byte, i int) (int, bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		i = skipDigits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, false
		}
		i = skipDigits(b, i)
	}
	return i, true
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// appendES6 appends the finite double f as ECMAScript's
// Number.prototype.toString writes it (ECMA-262, Number::toString), the
// form RFC 8785 prescribes: the shortest decimal that reads back as f, in
// plain notation from 1e-6 up to 1e21 and in exponent notation outside
// that range, -0 written as 0.
func appendES6(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		if m := a * 1e6; a < 1e9 && m == math.Trunc(m) && m/1e6 == a {
			return appendMicros(dst, f < 0, uint64(m))
		}
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	// Go writes "1e-07" and "1.5e+300"; ECMAScript writes "1e-7".
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'e', -1, 64)
	e := bytes.IndexByte(dst[start:], 'e') + start + 2 // the exponent's first digit
	if dst[e] == '0' {
		dst = append(dst[:e], dst[e+1:]...)
	}
	return dst
}

// appendMicros appends the decimal m/10^6, with a minus sign when neg:
// the fast path of appendES6 for the common case of a number with at most
// six decimals below 1e9. m/10^6 is then f's shortest decimal: it reads
// back as f (appendES6 checks that m/1e6, correctly rounded, is f), and it
// has at most 15 significant digits, and no two decimals of 15 digits fall
// within the rounding interval of one double.
func appendMicros(dst []byte, neg bool, m uint64) []byte {
	if neg {
		dst = append(dst, '-')
	}
	dst = strconv.AppendUint(dst, m/1e6, 10)
	return appendDecimals(dst, m%1e6, 6)
}

// exactDouble reports whether the number text has the same decimal value
// as f's shortest form, that is whether canonicalising text loses nothing.
// 0.25, 2.50 and 1e2 are exact; 0.1000000000000000055511151231257827 and
// 12345678901234567890 are not (the doubles nearest them are 0.1 and
// 12345678901234567000).
func (c *canonicalizer) exactDouble(text []byte, f float64) bool {
	var buf [32]byte
	d, p := appendSignificand(c.digits[:0], text)
	n := len(d)
	d, q := appendSignificand(d, strconv.AppendFloat(buf[:0], f, 'e', -1, 64))
	c.digits = d
	return bytes.Equal(d[:n], d[n:]) && (n == 0 || p == q)
}

// appendSignificand appends the significant digits of the JSON number s
// (no leading or trailing zeros; none for zero) and returns p such that
// the number's magnitude is those digits times 10^p. An exponent too
// large for any double saturates.
func appendSignificand(dst []byte, s []byte) ([]byte, int) {
	start := len(dst)
	p, i := 0, 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	afterPoint := false
	for ; i < len(s) && (isDigit(s[i]) || s[i] == '.'); i++ {
		switch {
		case s[i] == '.':
			afterPoint = true
			continue
		case afterPoint:
			p--
		}
		if s[i] != '0' || len(dst) > start {
			dst = append(dst, s[i])
		}
	}
	if i < len(s) { // an exponent
		p += parseExponent(s[i+1:])
	}
	for len(dst) > start && dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
		p++
	}
	return dst, p
}

// parseExponent returns the value of a JSON exponent ("+12", "-7", "300"),
// saturated at ±1e9.
func parseExponent(s []byte) int {
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	e := 0
	for _, ch := range s {
		if e < 1e9 {
			e = e*10 + int(ch-'0')
		}
	}
	if neg {
		return -e
	}
	return e
}

// clip returns text for an error message, shortened if it is long.
func clip(text []byte) string {
	const max = 64
	if len(text) <= max {
		return string(text)
	}
	return string(text[:max]) + "..."
}
