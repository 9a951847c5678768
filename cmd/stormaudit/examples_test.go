package main

import (
	"io"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"
)

// TestExamples: every command that does work has examples in its help,
// and every example names a command that exists and flags it defines.
func TestExamples(t *testing.T) {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	var walk func(c *cli.Command, name string)
	walk = func(c *cli.Command, name string) {
		for _, sub := range c.Commands {
			if sub.Hidden || sub.Name == "help" || sub.Name == "completion" {
				continue
			}
			full := strings.TrimSpace(name + " " + sub.Name)
			if len(sub.Commands) == 0 && !strings.Contains(sub.Description, "Examples:\n  stormaudit "+full) {
				t.Errorf("%s: no examples in its help", full)
			}
			walk(sub, full)
		}
	}
	walk(app, "")
	for name, exs := range examples {
		for _, ex := range exs {
			checkExample(t, app, name, ex)
		}
	}
	// required flags say so, in the help and when missing
	_, out, _ := runArgs(t, "ingest", "--help")
	if !strings.Contains(string(out), "dataset directory to create (must be new or empty) (required)") {
		t.Errorf("ingest --help does not mark --output required:\n%s", out)
	}
	if code, _, stderr := runArgs(t, "ingest", "x.ndjson"); code != 2 || stderr != "stormaudit: --output is required (the command's --help shows examples)\n" {
		t.Errorf("ingest without -o: exit %d, %q", code, stderr)
	}
}

// checkExample finds the command an example runs and checks its flags.
func checkExample(t *testing.T, app *cli.Command, name, ex string) {
	t.Helper()
	line := ex[strings.Index(ex, "stormaudit "):] // after a pipe into it
	if i := strings.IndexAny(line, "|>"); i >= 0 {
		line = line[:i]
	}
	words := strings.Fields(line)[1:]
	for len(words) > 0 && strings.HasPrefix(words[0], "-") { // the root's flags
		n := 2
		if f := flagNamed(app, words[0]); f != nil && isBool(f) {
			n = 1
		}
		words = words[min(n, len(words)):]
	}
	cmd := app
	for _, part := range strings.Fields(name) {
		if len(words) == 0 || words[0] != part {
			t.Errorf("example %q of %s does not run %s", ex, name, name)
			return
		}
		cmd, words = cmd.Command(part), words[1:]
	}
	flags := map[string]cli.Flag{}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			flags[n] = f
		}
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "-") || w == "-" {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		f, ok := flags[name]
		if !ok {
			t.Errorf("example %q: %s has no flag %s", ex, cmd.Name, w)
			continue
		}
		if _, isBool := f.(*cli.BoolFlag); !isBool && !hasValue {
			i++ // its value
		}
	}
}
