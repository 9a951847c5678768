package hashchain

import (
	"cmp"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stormaudit/stormaudit/internal/jsonstr"
)

// string reads the JSON string whose opening quote is at i into c.str,
// unescaped, and returns the index after its closing quote. It rejects
// what RFC 8785 rejects: invalid UTF-8 and lone surrogates.
func (c *canonicalizer) string(i int) (int, error) {
	end, escaped, err := jsonstr.Scan(c.in, i, jsonstr.UTF8|jsonstr.NoLoneSurrogates)
	if err != nil {
		return err.Offset, c.stringError(err)
	}
	if body := c.in[i+1 : end-1]; escaped {
		c.str = jsonstr.AppendUnescaped(c.str[:0], body)
	} else {
		c.str = append(c.str[:0], body...)
	}
	return end, nil
}

// stringError words what is wrong with a string in RFC 8785's terms.
func (c *canonicalizer) stringError(err *jsonstr.Error) error {
	switch err.Kind {
	case jsonstr.Unterminated:
		return c.errorAt(err.Offset, "'\"' to end the string")
	case jsonstr.Control:
		return c.errorAt(err.Offset, "a control character written as an escape sequence")
	case jsonstr.BadUTF8:
		return c.errorAt(err.Offset, "UTF-8")
	case jsonstr.BadEscape:
		if err.Offset >= len(c.in) {
			return c.errorAt(err.Offset, "an escape sequence")
		}
		return c.errorAt(err.Offset, `an escape sequence (one of \" \\ \/ \b \f \n \r \t \uXXXX)`)
	case jsonstr.BadHex:
		return &JSONError{Offset: err.Escape, Expected: `\u and four hex digits`, Found: describeAt(c.in, err.Escape+2)}
	}
	// jsonstr.LoneSurrogate
	return &JSONError{Offset: err.Escape, Expected: "a surrogate pair (RFC 8785 rejects lone surrogates)", Found: `a lone surrogate \u` + string(c.in[err.Escape+2:err.Escape+6])}
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
