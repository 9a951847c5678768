package jsonstr

import "unicode/utf8"

// AppendQuoted appends s to dst as a JSON string: in double quotes, with
// '"' and '\\' escaped by a backslash, \n \r \t as such, the other control
// characters as \u00XX, and every other byte as it is. With UTF8, each
// byte that does not start valid UTF-8 is written as U+FFFD (so the string
// is UTF-8 however s is); with EscapeDEL, U+007F is escaped too. Scan with
// the same flags accepts the result, and AppendUnescaped gives back s (or,
// with UTF8, s with those bytes replaced).
func AppendQuoted(dst []byte, s string, f Flags) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			n := 1
			if f&UTF8 != 0 {
				var r rune
				if r, n = utf8.DecodeRuneInString(s[i:]); r == utf8.RuneError && n == 1 {
					dst = append(append(dst, s[start:i]...), "\uFFFD"...)
					start = i + 1
				}
			}
			i += n
			continue
		}
		e := escapes[c]
		if c == 0x7f && f&EscapeDEL != 0 {
			e = 'u'
		}
		if e == 0 {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		if e == 'u' {
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		} else {
			dst = append(dst, '\\', e)
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// escapes says how AppendQuoted writes each ASCII byte: 0 as itself, 'u'
// as \u00XX, any other letter as a backslash and that letter.
var escapes = func() (t [utf8.RuneSelf]byte) {
	for c := range 0x20 {
		t[c] = 'u'
	}
	t['\n'], t['\r'], t['\t'] = 'n', 'r', 't'
	t['"'], t['\\'] = '"', '\\'
	return t
}()
