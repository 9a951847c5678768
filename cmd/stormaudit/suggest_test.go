package main

import (
	"strings"
	"testing"
)

// TestSuggestions: an unknown command or flag names the nearest one the
// help shows, when one is near, and exits 2.
func TestSuggestions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chek"}, `unknown command "chek"; did you mean "check"? (stormaudit --help lists the commands)`},
		{[]string{"verfiy", "ds"}, `did you mean "verify"?`},
		{[]string{"policy", "shw"}, `unknown command "shw"; did you mean "show"? (stormaudit policy --help lists the commands)`},
		{[]string{"check", "--formt", "json", "x.ndjson"}, "check: unknown flag --formt; did you mean --format? (stormaudit check --help lists the flags)"},
		{[]string{"ingest", "--ouput", "ds", "x.ndjson"}, "ingest: unknown flag --ouput; did you mean --output?"},
		{[]string{"xyzzy"}, `stormaudit: unknown command "xyzzy" (stormaudit --help`},                // nothing near
		{[]string{"check", "-Z", "x.ndjson"}, "check: unknown flag -Z (stormaudit check --help"},     // one letter: no guess
		{[]string{"check", "--cpuprofil", "x"}, "check: unknown flag --cpuprofil (stormaudit check"}, // hidden flags are not offered
	} {
		code, _, stderr := runArgs(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if code, stdout, _ := runArgs(t); code != 0 || !strings.Contains(string(stdout), "COMMANDS") {
		t.Errorf("no arguments: exit %d, want 0 and the help; stdout %q", code, stdout)
	}
}
