package ingest

import (
	"context"
	"math"
	"path/filepath"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/internal/testonly/testkit"
)

// TestIngestLeavesMemoryLimit: Run and Scan leave the process's memory
// limit alone, unset or set (MemoryLimit is the program's to set, as
// stormaudit's commands do).
func TestIngestLeavesMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	in := testkit.WriteInput(t, "fleet.ndjson", testkit.GenLines(3000, 30, 1))
	var mu sync.Mutex
	var seen []int64
	observe := func() {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, debug.SetMemoryLimit(-1))
	}
	if _, err := Run(context.Background(), filepath.Join(t.TempDir(), "free"), []Source{{Name: in}}, Options{Progress: func(Progress) { observe() }}); err != nil {
		t.Fatal(err)
	}
	if _, err := Scan(context.Background(), filepath.Join(t.TempDir(), "scan"), []Source{{Name: in}}, Options{},
		func([]auditfmt.Record) error { observe(); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 {
		t.Fatal("the ingest never called back: nothing observed")
	}
	for _, l := range seen {
		if l != math.MaxInt64 {
			t.Fatalf("a memory limit of %d while ingesting: ingest set one", l)
		}
	}

	debug.SetMemoryLimit(MemoryLimit)
	if _, err := Run(context.Background(), filepath.Join(t.TempDir(), "limited"), []Source{{Name: in}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != MemoryLimit {
		t.Errorf("the limit after Run: got %d, want the %d set before", got, MemoryLimit)
	}
}
