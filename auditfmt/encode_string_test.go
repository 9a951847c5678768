package auditfmt

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// appendJSONStringRef is AppendJSONString a byte at a time, as it was
// before it skipped eight plain bytes at once: the reference the fuzz
// test holds it to.
func appendJSONStringRef(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		case c < utf8.RuneSelf:
			dst = append(dst, c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(dst, '"')
}

// FuzzAppendJSONString: the output is the reference's, and valid JSON
// whose value is the input with each byte of invalid UTF-8 replaced.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain text longer than eight", `quote " and \ backslash in the middle of words`,
		"tab\tnew\nline\rcontrol\x01\x1f end", "ünïcødé ✓ after eight bytes", "\xff\xfe broken", strings.Repeat("a", 64) + "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendJSONString(nil, s)
		if want := appendJSONStringRef(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
		var valid strings.Builder // each byte of invalid UTF-8 replaced
		for i := 0; i < len(s); {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				valid.WriteRune(utf8.RuneError)
			} else {
				valid.WriteString(s[i : i+size])
			}
			i += size
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil || back != valid.String() {
			t.Fatalf("%q: %s decodes to %q, %v", s, got, back, err)
		}
	})
}

func BenchmarkAppendJSONString(b *testing.B) {
	s := strings.Repeat("dev-00042 drew 37.5 s at attempt 3 (backoff_wait at 2026-11-30T14:17:30.442039Z); ", 20)
	b.SetBytes(int64(len(s)))
	var dst []byte
	for b.Loop() {
		dst = AppendJSONString(dst[:0], s)
	}
}
