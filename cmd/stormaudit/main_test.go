package main

import (
	"flag"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the golden output in testdata/script")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"stormaudit": main, // as the binary runs, signals and all
	})
}

// TestScripts runs the command-line scripts in testdata/script: each is a
// txtar archive of commands and the output they must produce. Run with
// -update to rewrite the expected output after a deliberate change.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
	})
}
