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
