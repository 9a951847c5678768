package stormaudit_test

// The house sorted by purpose (docs/layout.md): every package of the
// repository sits on a floor, and imports, outside its tests, only
// packages on lower floors. Test tooling sits beside the floors, where
// only tests reach it. Tests themselves are not held: a test may import
// test tooling and whatever Go lets it. TestLayout reads every package's
// imports with go/build (the files only: no module is resolved, nothing
// is fetched) and fails naming each import that breaks the table below.

import (
	"errors"
	"fmt"
	"go/build"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is the import path of the module at the repository's root; the
// other modules of the repository (cmd/stormaudit-beam, bench/duckdb) are
// under it.
const module = "github.com/stormaudit/stormaudit"

// A floor is a layer of the house: what it is for and its packages, by
// path from the repository's root. A path ending in /... is every package
// under it (the most specific entry wins).
type floor struct {
	what string
	pkgs []string
}

// floors are the layers, bottom up. docs/layout.md describes them and
// says what kind of change goes where; TestLayoutDoc holds it to this
// table.
var floors = []floor{
	0: {"utilities: one small job each, importing nothing of the repository", []string{"internal/..."}},
	1: {"formats and models: audit records, broker logs, policies, redaction", []string{"auditfmt", "brokerlog", "policy", "redact"}},
	2: {"integrity: the hash chain and checkpoints", []string{"hashchain"}},
	3: {"storage: the dataset", []string{"dataset"}},
	4: {"making and judging records", []string{"analyze", "ingest", "simulate", "verify"}},
	5: {"results as formats, and replay", []string{"replay", "report"}},
	6: {"views for a person, and the configuration file", []string{"afteraction", "cmd/internal/front/config", "tui"}},
	7: {"the commands' shared front end and the demo's data", []string{"cmd/internal/demodata", "cmd/internal/front"}},
	8: {"commands and tools", []string{"bench/duckdb", "bench/genlog", "cmd/stormaudit", "cmd/stormaudit-beam"}},
}

// testOnly is the test tooling: only tests and test tooling import it; it
// imports any floor but the commands' (nothing under cmd/).
const testOnly = "internal/testonly/..."

// A pkg is one package's imports within the repository outside its
// tests, by path from the repository's root, each with where it is
// written.
type pkg map[string]string

// place returns the floor of the package at path p, or -1 for test
// tooling, and whether the table places it.
func place(p string) (int, bool) {
	if matches(testOnly, p) {
		return -1, true
	}
	best, at := "", 0
	for n, f := range floors {
		for _, e := range f.pkgs {
			if matches(e, p) && len(e) > len(best) {
				best, at = e, n
			}
		}
	}
	return at, best != ""
}

func matches(entry, p string) bool {
	if dir, ok := strings.CutSuffix(entry, "/..."); ok {
		return p == dir || strings.HasPrefix(p, dir+"/")
	}
	return p == entry
}

func describe(p string) string {
	n, ok := place(p)
	switch {
	case !ok:
		return p + " (on no floor)"
	case n < 0:
		return p + " (test tooling)"
	}
	return fmt.Sprintf("%s (floor %d)", p, n)
}

// refusals returns, sorted, what breaks the table in pkgs: a package the
// table does not place, and each import that goes sideways, up, or from
// the program to test tooling.
func refusals(pkgs map[string]pkg) []string {
	var out []string
	for p, pk := range pkgs {
		from, ok := place(p)
		if !ok {
			out = append(out, fmt.Sprintf("%s: a package on no floor: add it to the table of layout_test.go and to docs/layout.md", p))
			continue
		}
		for imp, at := range pk {
			to, ok := place(imp)
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s: %s imports %s, which is on no floor", at, p, imp))
			case from < 0 && strings.HasPrefix(imp, "cmd/"):
				out = append(out, fmt.Sprintf("%s: %s imports %s: test tooling imports the library, not the commands", at, describe(p), describe(imp)))
			case from < 0:
				// test tooling imports any package of the library
			case to < 0:
				out = append(out, fmt.Sprintf("%s: %s imports %s: only tests and test tooling may import it", at, describe(p), describe(imp)))
			case to >= from:
				out = append(out, fmt.Sprintf("%s: %s imports %s: a package imports only packages on lower floors (docs/layout.md)", at, describe(p), describe(imp)))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestLayoutRefuses shows the table refusing what it is there to refuse,
// the front end's old imports first.
func TestLayoutRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		pkgs map[string]pkg
		want string // in the one refusal; "" for none
	}{
		{"front end under internal/", map[string]pkg{"internal/front": {"report": "internal/front/render.go:12:2"}},
			"internal/front/render.go:12:2: internal/front (floor 0) imports report (floor 5): a package imports only packages on lower floors"},
		{"same floor", map[string]pkg{"analyze": {"ingest": "analyze/x.go:3:2"}},
			"analyze/x.go:3:2: analyze (floor 4) imports ingest (floor 4)"},
		{"a utility to another", map[string]pkg{"internal/safe": {"internal/ordered": "internal/safe/x.go:3:2"}},
			"internal/safe (floor 0) imports internal/ordered (floor 0)"},
		{"up", map[string]pkg{"dataset": {"analyze": "dataset/x.go:3:2"}},
			"dataset (floor 3) imports analyze (floor 4)"},
		{"program to test tooling", map[string]pkg{"report": {"internal/testonly/testkit": "report/x.go:3:2"}},
			"report/x.go:3:2: report (floor 5) imports internal/testonly/testkit (test tooling): only tests and test tooling may import it"},
		{"test tooling to a command's front end", map[string]pkg{"internal/testonly/simdata": {"cmd/internal/front": "x.go:3:2"}},
			"test tooling imports the library, not the commands"},
		{"a new package", map[string]pkg{"cmd/other": {}}, "cmd/other: a package on no floor"},
		{"an import on no floor", map[string]pkg{"cmd/stormaudit": {"other": "x.go:3:2"}}, "imports other, which is on no floor"},
		{"down", map[string]pkg{"report": {"analyze": "report/x.go:3:2", "internal/safe": "report/x.go:4:2"}}, ""},
		{"test tooling to the library", map[string]pkg{"internal/testonly/simdata": {"ingest": "x.go:3:2", "internal/testonly/testkit": "x.go:4:2"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := refusals(tc.pkgs)
			if tc.want == "" {
				if len(got) != 0 {
					t.Errorf("refusals = %q, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tc.want) {
				t.Errorf("refusals = %q, want one containing %q", got, tc.want)
			}
		})
	}
}

// TestLayout holds every package of the repository to the table.
func TestLayout(t *testing.T) {
	pkgs, err := readPackages(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"cmd/stormaudit", "cmd/stormaudit-beam", "analyze", "internal/testonly/testkit"} {
		if _, ok := pkgs[must]; !ok {
			t.Fatalf("found no package %s: the walk is broken", must)
		}
	}
	refused := refusals(pkgs)
	for _, r := range refused {
		t.Error(r)
	}
	if len(refused) > 0 {
		for n, f := range floors {
			t.Logf("floor %d, %s: %s", n, f.what, strings.Join(f.pkgs, " "))
		}
		t.Logf("test tooling: %s", testOnly)
	}
	// an entry of the table that names no package is left over from a move
	for n, f := range floors {
		for _, e := range f.pkgs {
			found := false
			for p := range pkgs {
				found = found || matches(e, p)
			}
			if !found {
				t.Errorf("floor %d names %s, which is no package: remove it from layout_test.go and docs/layout.md", n, e)
			}
		}
	}
}

// TestLayoutDoc holds docs/layout.md to the table: it names each entry.
func TestLayoutDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("docs", "layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	for n, f := range floors {
		for _, e := range append(slices.Clip(f.pkgs), testOnly) {
			if !strings.Contains(string(doc), "`"+strings.TrimSuffix(e, "/...")+"`") {
				t.Errorf("docs/layout.md does not name `%s` (floor %d)", strings.TrimSuffix(e, "/..."), n)
			}
		}
	}
}

// readPackages reads the imports within the repository, outside tests,
// of every package under root, the other modules' included; testdata, and directories
// whose names begin with . or _, are not packages, as for the go command.
// A directory's files are read as they build on Linux, macOS and Windows,
// and their imports joined, so a file for one system is held too.
func readPackages(root string) (map[string]pkg, error) {
	pkgs := map[string]pkg{}
	err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); dir != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		rel := filepath.ToSlash(dir)
		pk, program := pkg{}, false
		for _, goos := range []string{"linux", "darwin", "windows"} {
			ctxt := build.Default
			ctxt.GOOS = goos
			p, err := ctxt.ImportDir(dir, 0)
			if errors.As(err, new(*build.NoGoError)) {
				continue
			} else if err != nil {
				return fmt.Errorf("%s: %v", rel, err)
			}
			program = program || len(p.GoFiles)+len(p.CgoFiles) > 0
			within(pk, p.Imports, p.ImportPos)
		}
		if program { // a directory of tests alone (this one) is no package to import
			pkgs[rel] = pk
		}
		return nil
	})
	return pkgs, err
}

// within adds to m, by path from the repository's root, the imports of
// the repository's own packages, each with where it is first written.
func within(m map[string]string, imports []string, pos map[string][]token.Position) {
	for _, imp := range imports {
		rel, ok := strings.CutPrefix(imp, module+"/")
		if !ok {
			continue
		}
		if _, seen := m[rel]; !seen && len(pos[imp]) > 0 {
			at := pos[imp][0]
			name := at.Filename
			if wd, err := os.Getwd(); err == nil {
				if r, err := filepath.Rel(wd, name); err == nil {
					name = filepath.ToSlash(r)
				}
			}
			m[rel] = fmt.Sprintf("%s:%d:%d", name, at.Line, at.Column)
		}
	}
}
