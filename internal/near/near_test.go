package near

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"check", "check", 0}, {"chek", "check", 1}, {"verfiy", "verify", 1}, {"formt", "format", 1}, {"abc", "", 3}, {"kitten", "sitting", 3}} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"format", "fail-on", "output", "f"}
	for _, c := range []struct{ s, want string }{
		{"formt", "format"}, {"fail_on", "fail-on"}, {"outptu", "output"},
		{"x", ""},      // one letter: no guess
		{"zzzzzz", ""}, // nothing near
	} {
		if got := Nearest(c.s, names); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.s, got, c.want)
		}
	}
}
