package replay

import (
	"runtime/debug"
	"testing"

	"github.com/stormaudit/stormaudit/internal/sysmem"
)

// TuneGC sets the garbage collector as stormaudit replay does
// (cmd/stormaudit/memory.go, from MemoryLimit), for the tests and
// benchmarks that measure a replay as it runs, and returns what restores
// it. Run sets nothing of the process's itself.
func TuneGC() (restore func()) {
	gc := debug.SetGCPercent(-1)
	mem := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(min(mem, MemoryLimit(sysmem.Available())))
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(mem)
	}
}

// TestMemoryLimit: a quarter of the memory available, at least 1 GiB.
func TestMemoryLimit(t *testing.T) {
	for _, tc := range []struct{ available, want int64 }{
		{0, 1 << 30},           // the system does not say
		{2 << 30, 1 << 30},     // a small machine: the floor
		{16 << 30, 4 << 30},    // a quarter
		{24 << 30, 6 << 30},    // a quarter
		{40<<30 + 3, 10 << 30}, // rounded down
	} {
		if got := MemoryLimit(tc.available); got != tc.want {
			t.Errorf("MemoryLimit(%d) = %d, want %d", tc.available, got, tc.want)
		}
	}
}
