package jsonstr

import (
	"bytes"
	"math/bits"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Scan checks the JSON string whose opening quote is at index i of s (the
// byte there is not looked at) and returns the index after its closing
// quote and whether it has escapes. On error, end is err.Offset.
func Scan[T string | []byte](s T, i int, f Flags) (end int, escaped bool, err *Error) {
	j := i + 1
	for {
		if j = skipPlain(s, j); j >= len(s) {
			return j, false, &Error{Kind: Unterminated, Offset: j}
		}
		switch c := s[j]; {
		case c == '"':
			return j + 1, escaped, nil
		case c == '\\':
			n, err := escapeLen(s, j, f)
			if err != nil {
				return err.Offset, false, err
			}
			j, escaped = j+n, true
		case c < 0x20:
			return j, false, &Error{Kind: Control, Offset: j}
		case f&UTF8 == 0:
			j++
		default:
			r, n := decodeRune(s[j:])
			if r == utf8.RuneError && n == 1 {
				return j, false, &Error{Kind: BadUTF8, Offset: j}
			}
			j += n
		}
	}
}

// escapeLen checks the escape whose backslash is at i and returns its
// length: 2, 6, or 12 for a surrogate pair checked under
// NoLoneSurrogates.
func escapeLen[T string | []byte](s T, i int, f Flags) (int, *Error) {
	if i+1 >= len(s) {
		return 0, &Error{Kind: BadEscape, Offset: i + 1, Escape: i}
	}
	switch s[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
	default:
		return 0, &Error{Kind: BadEscape, Offset: i + 1, Escape: i}
	}
	r, bad := hex4(s, i+2)
	if bad >= 0 {
		return 0, &Error{Kind: BadHex, Offset: bad, Escape: i}
	}
	if f&NoLoneSurrogates == 0 || !utf16.IsSurrogate(r) {
		return 6, nil
	}
	if r < 0xdc00 && i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
		if lo, bad := hex4(s, i+8); bad < 0 && utf16.DecodeRune(r, lo) != utf8.RuneError {
			return 12, nil
		}
	}
	return 0, &Error{Kind: LoneSurrogate, Offset: i, Escape: i}
}

// AppendUnescaped appends to dst the value of the JSON string whose
// contents (what lies between its quotes) are body, as the package doc
// says. body should be what Scan accepted; if it is not, what is not a
// valid escape is kept as it is.
func AppendUnescaped[T string | []byte](dst []byte, body T) []byte {
	for len(body) > 0 {
		k := indexByte(body, '\\')
		if k < 0 {
			return append(dst, body...)
		}
		dst, body = append(dst, body[:k]...), body[k:]
		if len(body) < 2 {
			break
		}
		switch body[1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			dst, body = append(dst, unescapedByte(body[1])), body[2:]
			continue
		case 'u':
		default:
			dst, body = append(dst, '\\'), body[1:]
			continue
		}
		r, bad := hex4(body, 2)
		if bad >= 0 {
			dst, body = append(dst, body[:2]...), body[2:]
			continue
		}
		body = body[6:]
		if utf16.IsSurrogate(r) {
			pair := utf8.RuneError
			if len(body) >= 6 && body[0] == '\\' && body[1] == 'u' {
				if lo, bad := hex4(body, 2); bad < 0 {
					pair = utf16.DecodeRune(r, lo)
				}
			}
			if pair != utf8.RuneError {
				body = body[6:]
			}
			r = pair
		}
		dst = utf8.AppendRune(dst, r)
	}
	return append(dst, body...)
}

// unescapedByte returns the byte the escape \c stands for, c being one of
// " \ / b f n r t.
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
	return c
}

// hex4 returns the value of the four hex digits at s[i:], and bad = -1;
// or, if they are not four hex digits, the index of the first that is
// missing or not one.
func hex4[T string | []byte](s T, i int) (r rune, bad int) {
	for k := i; k < i+4; k++ {
		if k >= len(s) {
			return 0, k
		}
		var d byte
		switch c := s[k]; {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, k
		}
		r = r<<4 | rune(d)
	}
	return r, -1
}

// plain marks the bytes that stand for themselves in a JSON string and
// need no check: printable ASCII other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipPlain returns the index of the first byte at or after i that is
// not plain, or len(s). It looks at eight bytes at a time.
func skipPlain[T string | []byte](s T, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		_ = s[i+7]
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		q := x ^ (ones * '"')
		e := x ^ (ones * '\\')
		// A high bit marks a byte that is '"' or '\\' (zero after the
		// xor), a control character (< 0x20), or not ASCII. Only the
		// lowest mark is exact, and that is the one used.
		if m := ((q-ones)&^q | (e-ones)&^e | (x-ones*0x20)&^x | x) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for i < len(s) && plain[s[i]] {
		i++
	}
	return i
}

func indexByte[T string | []byte](s T, c byte) int {
	if b, ok := any(s).([]byte); ok {
		return bytes.IndexByte(b, c)
	}
	return strings.IndexByte(string(s), c)
}

func decodeRune[T string | []byte](s T) (rune, int) {
	if b, ok := any(s).([]byte); ok {
		return utf8.DecodeRune(b)
	}
	return utf8.DecodeRuneInString(string(s))
}
