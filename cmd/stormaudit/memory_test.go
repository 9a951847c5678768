package main

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
	"github.com/stormaudit/stormaudit/replay"
)

// TestIngestMemoryLimit: the commands ingest under ingest.MemoryLimit
// (ingest sets none itself), restore the limit after, and leave a limit
// the process was given (GOMEMLIMIT) as it is; both for a dataset
// (ingestRun) and for check of raw logs (ingestScan).
func TestIngestMemoryLimit(t *testing.T) {
	in := testkit.WriteInput(t, "fleet.ndjson", testkit.GenLines(3000, 30, 1))
	for _, tc := range []struct {
		name     string
		set      int64 // the limit before
		want     int64 // the limit while ingesting
		scanning bool
	}{
		{"Run, no limit set", math.MaxInt64, ingest.MemoryLimit, false},
		{"Run, GOMEMLIMIT", 1 << 40, 1 << 40, false},
		{"Scan, no limit set", math.MaxInt64, ingest.MemoryLimit, true},
		{"Scan, GOMEMLIMIT", 1 << 40, 1 << 40, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(tc.set))
			var mu sync.Mutex
			var seen []int64
			observe := func() {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, debug.SetMemoryLimit(-1))
			}
			dir := filepath.Join(t.TempDir(), "ds")
			src := []ingest.Source{{Name: in}}
			var err error
			if tc.scanning {
				_, err = ingestScan(context.Background(), dir, src, ingest.Options{},
					func([]auditfmt.Record) error { observe(); return nil })
			} else {
				_, err = ingestRun(context.Background(), dir, src, ingest.Options{Progress: func(ingest.Progress) { observe() }})
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(seen) == 0 {
				t.Fatal("the ingest never called back: nothing observed")
			}
			for _, l := range seen {
				if l != tc.want {
					t.Fatalf("the limit while ingesting: got %d, want %d", l, tc.want)
				}
			}
			if got := debug.SetMemoryLimit(-1); got != tc.set {
				t.Errorf("the limit after: got %d, want %d as before", got, tc.set)
			}
		})
	}
}

// TestIngestOnlyUnderMemoryLimit: no command calls ingest.Run or
// ingest.Scan but through ingestRun and ingestScan, which set the limit.
func TestIngestOnlyUnderMemoryLimit(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "memory.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "ingest" && (sel.Sel.Name == "Run" || sel.Sel.Name == "Scan") {
					t.Errorf("%s: ingest.%s: call ingest%s (memory.go), which sets the process's memory limit", fset.Position(sel.Pos()), sel.Sel.Name, sel.Sel.Name)
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no command source found: the test checked nothing")
	}
}

// TestReplayGC: stormaudit replay turns the collector off until
// replay.MemoryLimit of the memory available, or the lower limit the
// process was given (GOMEMLIMIT), and restores both after.
func TestReplayGC(t *testing.T) {
	gcPercent := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	const available = 16 << 30
	full := replay.MemoryLimit(available)
	for _, tc := range []struct {
		name      string
		set, want int64
	}{
		{"no limit set", math.MaxInt64, full},
		{"GOMEMLIMIT below", 512 << 20, 512 << 20},
		{"GOMEMLIMIT above", full + 1, full},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(tc.set))
			defer debug.SetGCPercent(debug.SetGCPercent(100))
			restore := tuneReplayGC(available)
			gc, mem := gcPercent(), debug.SetMemoryLimit(-1)
			restore()
			if gc != -1 || mem != tc.want {
				t.Errorf("while replaying: GOGC %d and a limit of %d, want off and %d", gc, mem, tc.want)
			}
			if gc, mem := gcPercent(), debug.SetMemoryLimit(-1); gc != 100 || mem != tc.set {
				t.Errorf("after: GOGC %d and a limit of %d, want 100 and %d as before", gc, mem, tc.set)
			}
		})
	}
}
