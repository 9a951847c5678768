package hashchain

import (
	"cmp"
	"unicode/utf16"
	"unicode/utf8"
)

// string reads the JSON string whose opening quote is at i into c.str,
// unescaped, and returns the index after its closing quote. It rejects
// what RFC 8785 rejects: invalid UTF-8 and lone surrogates.
func (c *canonicalizer) string(i int) (int, error) {
	in := c.in
	c.str = c.str[:0]
	j := i + 1
	for {
		start := j
		for j < len(in) && plainASCII[in[j]] {
			j++
		}
		c.str = append(c.str, in[start:j]...)
		if j >= len(in) {
			return j, c.errorAt(j, "'\"' to end the string")
		}
		switch ch := in[j]; {
		case ch == '"':
			return j + 1, nil
		case ch == '\\':
			var err error
			if j, err = c.escape(j); err != nil {
				return j, err
			}
		case ch < 0x20:
			return j, c.errorAt(j, "a control character written as an escape sequence")
		default:
			r, n := utf8.DecodeRune(in[j:])
			if r == utf8.RuneError && n == 1 {
				return j, c.errorAt(j, "UTF-8")
			}
			c.str = append(c.str, in[j:j+n]...)
			j += n
		}
	}
}

// escape reads the escape sequence at i into c.str and returns the index
// after it.
func (c *canonicalizer) escape(i int) (int, error) {
	in := c.in
	if i+1 >= len(in) {
		return i + 1, c.errorAt(i+1, "an escape sequence")
	}
	switch ch := in[i+1]; ch {
	case '"', '\\', '/':
		c.str = append(c.str, ch)
	case 'b':
		c.str = append(c.str, '\b')
	case 'f':
		c.str = append(c.str, '\f')
	case 'n':
		c.str = append(c.str, '\n')
	case 'r':
		c.str = append(c.str, '\r')
	case 't':
		c.str = append(c.str, '\t')
	case 'u':
		return c.unicodeEscape(i)
	default:
		return i + 1, c.errorAt(i+1, `an escape sequence (one of \" \\ \/ \b \f \n \r \t \uXXXX)`)
	}
	return i + 2, nil
}

// unicodeEscape reads the \uXXXX escape at i, and the low surrogate after
// it when it is a high surrogate, into c.str.
func (c *canonicalizer) unicodeEscape(i int) (int, error) {
	r, ok := hex4(c.in, i+2)
	if !ok {
		return i, &JSONError{Offset: i, Expected: `\u and four hex digits`, Found: describeAt(c.in, i+2)}
	}
	end := i + 6
	if utf16.IsSurrogate(r) {
		lo, ok := rune(0), false
		if r < 0xdc00 && len(c.in)-end >= 6 && c.in[end] == '\\' && c.in[end+1] == 'u' {
			lo, ok = hex4(c.in, end+2)
		}
		if r = utf16.DecodeRune(r, lo); !ok || r == utf8.RuneError {
			return i, &JSONError{Offset: i, Expected: "a surrogate pair (RFC 8785 rejects lone surrogates)", Found: `a lone surrogate \u` + string(c.in[i+2:i+6])}
		}
		end += 6
	}
	c.str = utf8.AppendRune(c.str, r)
	return end, nil
}

// hex4 returns the value of the four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if len(b)-i < 4 {
		return 0, false
	}
	var r rune
	for _, ch := range b[i : i+4] {
		var d byte
		switch {
		case '0' <= ch && ch <= '9':
			d = ch - '0'
		case 'a' <= ch && ch <= 'f':
			d = ch - 'a' + 10
		case 'A' <= ch && ch <= 'F':
			d = ch - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

const hexDigits = "0123456789abcdef"

// plainASCII holds the bytes that stand for themselves in a JSON string:
// ASCII other than control characters, '"' and '\\'.
var plainASCII = func() (t [256]bool) {
	for ch := 0x20; ch < utf8.RuneSelf; ch++ {
		t[ch] = ch != '"' && ch != '\\'
	}
	return t
}()

// appendJSONBytes appends s, which is valid UTF-8, as an RFC 8785 string.
func appendJSONBytes(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i, ch := range s {
		if plainASCII[ch] || ch >= utf8.RuneSelf {
			continue
		}
		dst = appendEscape(append(dst, s[start:i]...), ch)
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendJSONString appends s as an RFC 8785 string. It reports whether s
// is valid UTF-8; each byte of an invalid sequence is written as U+FFFD.
func appendJSONString(dst []byte, s string) ([]byte, bool) {
	dst = append(dst, '"')
	i := 0
	for i < len(s) && plainASCII[s[i]] {
		i++
	}
	if i == len(s) { // the common case: nothing to escape or check
		dst = append(dst, s...)
		return append(dst, '"'), true
	}
	valid, start := true, 0
	for i < len(s) {
		ch := s[i]
		if plainASCII[ch] {
			i++
			continue
		}
		if ch < utf8.RuneSelf {
			dst = appendEscape(append(dst, s[start:i]...), ch)
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(append(dst, s[start:i]...), "\uFFFD"...)
			valid = false
			start = i + 1
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), valid
}

// appendEscape appends the RFC 8785 escape of ch, which is '"', '\\' or a
// control character.
func appendEscape(dst []byte, ch byte) []byte {
	switch ch {
	case '"', '\\':
		return append(dst, '\\', ch)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[ch>>4], hexDigits[ch&0xf])
}

// compareUTF16 compares two valid UTF-8 strings as arrays of UTF-16 code
// units, the order RFC 8785 sorts member names in. It differs from
// comparing the bytes only where a character above U+FFFF meets one in
// U+E000 to U+FFFF: in UTF-16 the first is a surrogate pair, which sorts
// first.
func compareUTF16(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return cmp.Compare(len(a), len(b))
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	return cmp.Compare(utf16Key(ra), utf16Key(rb))
}

// utf16Key returns r's UTF-16 code units as one number that sorts as they do.
func utf16Key(r rune) uint32 {
	if r < 0x10000 {
		return uint32(r) << 16
	}
	hi, lo := utf16.EncodeRune(r)
	return uint32(hi)<<16 | uint32(lo)
}
