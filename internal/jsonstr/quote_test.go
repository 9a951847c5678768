package jsonstr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendQuoted(t *testing.T) {
	tests := []struct {
		in    string
		flags Flags
		want  string
	}{
		{"", 0, `""`},
		{"plain", 0, `"plain"`},
		{"a\"b\\c/d", 0, `"a\"b\\c/d"`},
		{"\n\r\t\b\f\x00\x1f", 0, `"\n\r\t\u0008\u000c\u0000\u001f"`},
		{"del \x7f", 0, "\"del \x7f\""},
		{"del \x7f", EscapeDEL, `"del \u007f"`},
		{"ünï ✓ 😀", UTF8, `"ünï ✓ 😀"`},
		{"bad \xff\xfe \xc3", 0, "\"bad \xff\xfe \xc3\""},
		{"bad \xff\xfe \xc3", UTF8, "\"bad \uFFFD\uFFFD \uFFFD\""},
		{"\xed\xa0\x80", UTF8, "\"\uFFFD\uFFFD\uFFFD\""},
		{"x\x7f\xff\"", UTF8 | EscapeDEL, "\"x\\u007f\uFFFD\\\"\""},
	}
	for _, tt := range tests {
		if got := string(AppendQuoted([]byte("x"), tt.in, tt.flags)); got != "x"+tt.want {
			t.Errorf("AppendQuoted(%q, %b) = %s, want %s", tt.in, tt.flags, got[1:], tt.want)
		}
	}
}

// FuzzAppendQuoted: what AppendQuoted writes is one string to Scan with
// the same flags, and to json.Valid, and reads back as what was written:
// s itself, or with UTF8 s with each byte of invalid UTF-8 replaced, as
// encoding/json reads it too. With EscapeDEL no DEL is left. The seed
// corpus is in testdata/fuzz/FuzzAppendQuoted.
func FuzzAppendQuoted(f *testing.F) {
	seedCorpus(f, "FuzzAppendQuoted")
	f.Fuzz(func(t *testing.T, s string) {
		for _, fl := range []Flags{0, UTF8, EscapeDEL, UTF8 | EscapeDEL} {
			q := AppendQuoted(nil, s, fl)
			end, _, err := Scan(q, 0, fl)
			if err != nil || end != len(q) || !json.Valid(q) {
				t.Fatalf("AppendQuoted(%q, %b) = %q: Scan says %d, %v; json.Valid %v", s, fl, q, end, err, json.Valid(q))
			}
			want := s
			if fl&UTF8 != 0 {
				want = string([]rune(s)) // each byte of invalid UTF-8 becomes U+FFFD
				var fromJSON string
				if err := json.Unmarshal(q, &fromJSON); err != nil || fromJSON != want {
					t.Fatalf("AppendQuoted(%q, %b) = %q: json.Unmarshal makes %q, %v", s, fl, q, fromJSON, err)
				}
			}
			if got := AppendUnescaped(nil, q[1:len(q)-1]); string(got) != want {
				t.Fatalf("AppendQuoted(%q, %b) = %q, which unescapes to %q", s, fl, q, got)
			}
			if fl&EscapeDEL != 0 && bytes.IndexByte(q, 0x7f) >= 0 {
				t.Fatalf("AppendQuoted(%q, %b) = %q keeps a DEL", s, fl, q)
			}
			if fl&UTF8 != 0 && !utf8.Valid(q) || strings.ContainsFunc(string(q), func(r rune) bool { return r < 0x20 }) {
				t.Fatalf("AppendQuoted(%q, %b) = %q", s, fl, q)
			}
		}
	})
}
