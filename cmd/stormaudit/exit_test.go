package main

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExitStatuses pins each constructor's exit status and message, and
// that the outermost status in a chain is the one that counts.
func TestExitStatuses(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		code int
		msg  string
	}{
		{"usageErr", usageErr("export: --format: expected arrow or ndjson, found %q", "xml"), 2, `export: --format: expected arrow or ndjson, found "xml"`},
		{"failed", failed("demo: keygen", io.ErrShortWrite), 2, "demo: keygen: short write"},
		{"failed without what", failed("", errors.New("replay: protocol 3: expected 4 (3.1.1) or 5")), 2, "replay: protocol 3: expected 4 (3.1.1) or 5"},
		{"verdict", verdict(errors.New("verify: chain broken")), 1, "verify: chain broken"},
		{"inconclusive", inconclusive(errors.New("replay: fell behind")), 3, "replay: fell behind"},
		{"interrupted", interrupted(errors.New("browse: interrupted")), 130, "browse: interrupted"},
		{"failed around a verdict", failed("demo: what-if", verdict(errors.New("no"))), 2, "demo: what-if: no"},
	} {
		var ee *exitError
		if !errors.As(c.err, &ee) {
			t.Errorf("%s: %T is no exitError", c.name, c.err)
			continue
		}
		if ee.code != c.code || c.err.Error() != c.msg {
			t.Errorf("%s: exit %d %q, want %d %q", c.name, ee.code, c.err.Error(), c.code, c.msg)
		}
	}
	// failed wraps: run finds a cancellation through it
	if err := failed("check", context.Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("failed(%q, context.Canceled) does not wrap it: %v", "check", err)
	}
}

// exitConstructors are the only functions that may build an exitError.
var exitConstructors = []string{"usageErr", "failed", "verdict", "inconclusive", "interrupted"}

// TestExitErrorOnlyFromConstructors fails on an exitError built by hand
// (&exitError{code: 2, ...}, new(exitError), x.code = ...) outside the
// constructors in exit.go: each exit status has one vocabulary, the
// constructor that says what kind of failure it is, and no copy of the
// number to drift (issue 36).
func TestExitErrorOnlyFromConstructors(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var sources, built int
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		sources++
		for _, decl := range f.Decls {
			fn, _ := decl.(*ast.FuncDecl)
			allowed := name == "exit.go" && fn != nil && fn.Recv == nil && slices.Contains(exitConstructors, fn.Name.Name)
			ast.Inspect(decl, func(n ast.Node) bool {
				var what string
				switch n := n.(type) {
				case *ast.CompositeLit:
					if isIdent(n.Type, "exitError") {
						what = "an exitError literal"
					}
				case *ast.CallExpr:
					if isIdent(n.Fun, "new") && len(n.Args) == 1 && isIdent(n.Args[0], "exitError") {
						what = "new(exitError)"
					}
				case *ast.AssignStmt:
					for _, lhs := range n.Lhs {
						if sel, ok := lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == "code" {
							what = "an assignment to .code"
						}
					}
				}
				switch {
				case what == "":
				case allowed:
					built++
				default:
					t.Errorf("%s: %s: build it with %s (exit.go) instead, the one that says what kind of failure it is", fset.Position(n.Pos()), what, strings.Join(exitConstructors, ", "))
				}
				return true
			})
		}
	}
	// the scan guards itself: it read the package and found the constructors' own
	if sources < 10 || built != len(exitConstructors) {
		t.Errorf("read %d source files and found %d exitErrors built in the constructors, want the package's and %d", sources, built, len(exitConstructors))
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
