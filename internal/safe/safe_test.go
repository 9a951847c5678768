package safe

import "testing"

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"dev-0001", "dev-0001"},
		{"capteur-é-日本", "capteur-é-日本"},
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"tab\tnl\n", `tab\x09nl\x0a`},
		{"del\x7f", `del\x7f`},
		{"c1\u0085\u009b", `c1\x85\x9b`},
		{"rlo\u202eevil", `rlo\u202eevil`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`},
		{"bad\xffutf8", `bad\xffutf8`},
		{`back\slash`, `back\\slash`},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func BenchmarkTextClean(b *testing.B) {
	for b.Loop() {
		Text("dev-000123")
	}
}

func TestLines(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{`already quoted "dev\x1b" stays`, `already quoted "dev\x1b" stays`},
		{"two\nlines", "two\nlines"},
		{"tab\tkept", "tab\tkept"},
		{"bad \x1b[2J line\nclean C:\\path line", `bad \x1b[2J line` + "\nclean C:\\path line"},
		{"a \\ and \u202e", `a \\ and \u202e`},
		{"invalid \xff", `invalid \xff`},
	} {
		if got := Lines(tc.in); got != tc.want {
			t.Errorf("Lines(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
