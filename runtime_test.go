package stormaudit_test

// A library does not change the process's runtime settings under its
// caller: the memory limit and the collector's pace are main's to set
// (ingest.MemoryLimit and replay.MemoryLimit say what to set; the
// commands set them). TestLibrariesLeaveTheRuntime holds every package
// below the commands' floor to it.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runtimeSetters returns where f calls a setter of runtime/debug
// (SetMemoryLimit, SetGCPercent, SetMaxThreads and the rest).
func runtimeSetters(fset *token.FileSet, f *ast.File) []string {
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "runtime/debug" {
			name = "debug"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && strings.HasPrefix(sel.Sel.Name, "Set") {
				out = append(out, fset.Position(sel.Pos()).String()+": debug."+sel.Sel.Name)
			}
		}
		return true
	})
	return out
}

func TestLibrariesLeaveTheRuntime(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		floor, ok := place(filepath.ToSlash(filepath.Dir(path)))
		if !ok || floor < 0 || floor == len(floors)-1 { // on no floor (TestLayout says so), test tooling, or a command
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		for _, at := range runtimeSetters(fset, f) {
			t.Errorf("%s: a library sets the process's runtime; return what to set, and let the command set it", at)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no library source found: the test checked nothing")
	}
}

// TestRuntimeSettersFound: the check finds a setter, under its import's
// name.
func TestRuntimeSettersFound(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{"package p\nimport \"runtime/debug\"\nfunc f() { debug.SetMemoryLimit(1); debug.SetGCPercent(-1) }\n", 2},
		{"package p\nimport rd \"runtime/debug\"\nfunc f() { rd.SetMaxThreads(1) }\n", 1},
		{"package p\nimport \"runtime/debug\"\nfunc f() { _ = debug.Stack() }\n", 0},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "p.go", tc.src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := runtimeSetters(fset, f); len(got) != tc.want {
			t.Errorf("%q: found %q, want %d", tc.src, got, tc.want)
		}
	}
}
