package jsonstr

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestScan(t *testing.T) {
	const all = UTF8 | NoLoneSurrogates
	tests := []struct {
		in      string
		flags   Flags
		end     int  // when valid
		escaped bool // when valid
		kind    Kind // when not
		offset  int  // when not
	}{
		{in: `""`, end: 2},
		{in: `"abc" more`, end: 5},
		{in: `"a longer string than eight bytes" x`, end: 34},
		{in: `"a longer string \"than\" eight bytes"`, end: 38, escaped: true},
		{in: `"\" \\ \/ \b \f \n \r \t"`, end: 25, escaped: true},
		{in: `"\u00e9\u00E9"`, end: 14, escaped: true},
		{in: "\"ünïcødé ✓\"", end: 17},
		{in: "\"\x7f\"", end: 3},
		{in: `"\ud83d\ude00"`, flags: all, end: 14, escaped: true},
		{in: `"\ud800"`, end: 8, escaped: true},
		{in: `"\udc00\ud800"`, end: 14, escaped: true},
		{in: "\"\xff\"", end: 3},
		{in: "\"\xed\xa0\x80\"", end: 5},

		{in: `"abc`, kind: Unterminated, offset: 4},
		{in: `"`, kind: Unterminated, offset: 1},
		{in: `"a longer string than eight bytes`, kind: Unterminated, offset: 33},
		{in: "\"a\tb\"", kind: Control, offset: 2},
		{in: "\"0123456789\x00\"", kind: Control, offset: 11},
		{in: `"\x"`, kind: BadEscape, offset: 2},
		{in: `"ab\`, kind: BadEscape, offset: 4},
		{in: `"\u12"`, kind: BadHex, offset: 5},
		{in: `"\u12`, kind: BadHex, offset: 5},
		{in: `"\u12x4"`, kind: BadHex, offset: 5},
		{in: "\"\xff\"", flags: UTF8, kind: BadUTF8, offset: 1},
		{in: "\"ok \xed\xa0\x80\"", flags: UTF8, kind: BadUTF8, offset: 4},
		{in: "\"\xc3\"", flags: UTF8, kind: BadUTF8, offset: 1},
		{in: `"\ud800"`, flags: NoLoneSurrogates, kind: LoneSurrogate, offset: 1},
		{in: `"x\udc00\ud800"`, flags: NoLoneSurrogates, kind: LoneSurrogate, offset: 2},
		{in: `"\ud800\u0041"`, flags: NoLoneSurrogates, kind: LoneSurrogate, offset: 1},
		{in: `"\ud800\ud800"`, flags: NoLoneSurrogates, kind: LoneSurrogate, offset: 1},
		{in: `"\ud800\u12zz"`, flags: NoLoneSurrogates, kind: LoneSurrogate, offset: 1},
		{in: `"\ud800\u12zz"`, kind: BadHex, offset: 11},
		{in: `"\ud800\`, flags: NoLoneSurrogates, kind: LoneSurrogate, offset: 1},
	}
	for _, tt := range tests {
		end, escaped, err := Scan(tt.in, 0, tt.flags)
		if tt.kind == 0 {
			if err != nil || end != tt.end || escaped != tt.escaped {
				t.Errorf("Scan(%q, %b) = %d, %v, %v; want %d, %v, nil", tt.in, tt.flags, end, escaped, err, tt.end, tt.escaped)
			}
		} else if err == nil || err.Kind != tt.kind || err.Offset != tt.offset || end != tt.offset {
			t.Errorf("Scan(%q, %b) = %d, %v, %v; want an error %v at %d", tt.in, tt.flags, end, escaped, err, tt.kind, tt.offset)
		}
		bend, bescaped, berr := Scan([]byte(tt.in), 0, tt.flags)
		if bend != end || bescaped != escaped || (berr == nil) != (err == nil) || berr != nil && *berr != *err {
			t.Errorf("Scan(%q, %b) on a []byte = %d, %v, %v; on a string %d, %v, %v", tt.in, tt.flags, bend, bescaped, berr, end, escaped, err)
		}
	}
}

// TestScanEscape: the escape kinds say where the backslash is.
func TestScanEscape(t *testing.T) {
	for _, in := range []string{`"ab\x"`, `"ab\`, `"ab\u12"`, `"ab\ud800"`} {
		_, _, err := Scan(in, 0, NoLoneSurrogates)
		if err == nil || err.Escape != 3 {
			t.Errorf("Scan(%q) = %+v, want Escape 3", in, err)
		}
	}
}

func TestScanFrom(t *testing.T) {
	in := `{"a":"b\n","c":1}`
	end, escaped, err := Scan(in, 5, 0)
	if err != nil || end != 10 || !escaped {
		t.Fatalf("Scan(%q, 5) = %d, %v, %v; want 10, true, nil", in, end, escaped, err)
	}
}

func TestAppendUnescaped(t *testing.T) {
	tests := []struct{ body, want string }{
		{``, ``},
		{`plain`, `plain`},
		{`\" \\ \/ \b \f \n \r \t`, "\" \\ / \b \f \n \r \t"},
		{`caf\u00e9 \u00E9`, "café é"},
		{`\ud83d\ude00!`, "😀!"},
		{`\ud800`, "\uFFFD"},
		{`\ud800x`, "\uFFFDx"},
		{`\ud800\u0041`, "\uFFFDA"},
		{`\ud800\ud800\udc00`, "\uFFFD\U00010000"},
		{`\udc00\ud800`, "\uFFFD\uFFFD"},
		{"kept \xff as is", "kept \xff as is"},
		// not what Scan accepts: kept as it is
		{`a\`, `a\`},
		{`a\q`, `a\q`},
		{`\u12`, `\u12`},
		{`\u12zz`, `\u12zz`},
	}
	for _, tt := range tests {
		if got := string(AppendUnescaped([]byte("x"), tt.body)); got != "x"+tt.want {
			t.Errorf("AppendUnescaped(%q) = %q, want %q", tt.body, got[1:], tt.want)
		}
		if got := string(AppendUnescaped(nil, []byte(tt.body))); got != tt.want {
			t.Errorf("AppendUnescaped([]byte(%q)) = %q, want %q", tt.body, got, tt.want)
		}
	}
}

// TestNoAllocs: scanning and unescaping into room enough allocate
// nothing, in a string or a []byte.
func TestNoAllocs(t *testing.T) {
	const in = `"caf\u00e9 ✓ and a few more plain bytes \ud83d\ude00"`
	b := []byte(in)
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() {
		end, _, _ := Scan(in, 0, UTF8|NoLoneSurrogates)
		buf = AppendUnescaped(buf[:0], in[1:end-1])
	}); n != 0 {
		t.Errorf("string: %v allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		end, _, _ := Scan(b, 0, UTF8|NoLoneSurrogates)
		buf = AppendUnescaped(buf[:0], b[1:end-1])
	}); n != 0 {
		t.Errorf("[]byte: %v allocations", n)
	}
}

// TestSkipPlain holds the eight-bytes-at-a-time skipPlain to the table.
func TestSkipPlain(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []byte("abc \"\\\x00\x1f\x20\x7f\x80\xc3\xa9\xff~")
	buf := make([]byte, 40)
	for range 100000 {
		n := rng.IntN(len(buf))
		for k := range n {
			if rng.IntN(4) == 0 {
				buf[k] = alphabet[rng.IntN(len(alphabet))]
			} else {
				buf[k] = 'a' + byte(rng.IntN(26))
			}
		}
		b := buf[:n]
		i := rng.IntN(n + 1)
		want := i
		for want < n && plain[b[want]] {
			want++
		}
		if got := skipPlain(b, i); got != want {
			t.Fatalf("skipPlain(%q, %d) = %d, want %d", b, i, got, want)
		}
		if got := skipPlain(string(b), i); got != want {
			t.Fatalf("skipPlain(string %q, %d) = %d, want %d", b, i, got, want)
		}
	}
}

func TestKindString(t *testing.T) {
	for k := Unterminated; k <= LoneSurrogate; k++ {
		if s := k.String(); s == "" || strings.HasPrefix(s, "Kind(") {
			t.Errorf("Kind %d has no text", k)
		}
	}
	if s := Kind(0).String(); s != "Kind(0)" {
		t.Errorf("Kind(0).String() = %q", s)
	}
}
