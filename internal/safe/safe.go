// Package safe makes device-provided strings safe to show to a person.
//
// A client id, an unknown field or a reason is whatever a device wrote,
// and a terminal obeys what it is sent: an ESC [2J in a client id clears
// the reviewer's screen, an OSC ]0;... sets the window title, a
// right-to-left override reorders what follows it on the line. Every
// human-facing output (text reports, the terminal UI, error messages)
// passes such strings through Text; machine formats (JSON, SARIF, the
// dataset) keep the raw value.
package safe

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text returns s with every character a terminal would act on shown
// visibly instead, as Go escapes write them: C0 controls (but none is
// kept: tab and newline too, since a value is one line), DEL and C1
// controls as \xHH, the bidirectional controls (U+061C, U+200E, U+200F,
// U+202A to U+202E, U+2066 to U+2069) as \uHHHH, invalid UTF-8 as \xHH per
// byte, and the backslash itself doubled so that the result is
// unambiguous. Other text, letters of any script included, is unchanged.
func Text(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\x%02x`, r)
		case bidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clean reports whether s needs no escaping: the common case, checked
// without allocating.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c == '\\' || c >= 0x80 {
			return !strings.ContainsFunc(s, func(r rune) bool {
				return r < 0x20 || r == 0x7f || r == '\\' || r >= 0x80 && r < 0xa0 || bidi(r) || r == utf8.RuneError
			})
		}
	}
	return true
}

// bidi reports whether r is a bidirectional control character.
func bidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// Lines returns s, a message of one or more lines, safe to print: a line
// holding a character a terminal would act on (a control other than tab,
// DEL, C1, a bidirectional control, invalid UTF-8) is escaped as Text
// escapes it; the other lines are kept as they are, so a message that
// already quotes a value with Go escapes ("dev\x1b") is not escaped twice.
// Error messages, which quote what a user or a device gave, go through it.
func Lines(s string) string {
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		if acts(l) {
			ls[i] = Text(l)
		}
	}
	return strings.Join(ls, "\n")
}

// acts reports whether a terminal would act on something in s.
func acts(s string) bool {
	return !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool {
		return r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 || bidi(r)
	})
}
