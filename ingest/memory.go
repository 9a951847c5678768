package ingest

import (
	"math"
	"runtime/debug"
)

// MemoryLimit is the soft limit of the Go runtime's memory (see
// runtime/debug.SetMemoryLimit) that Run and Scan set for their
// duration when none is set (no GOMEMLIMIT). What an ingest holds is
// bounded by design: two sort chunks while reading, and while writing
// each partition's merge buffers, batches and Parquet writer, about 160
// MB on 20 million lines. Without a limit the collector lets the heap
// grow to twice what it holds before it collects (GOGC=100), which
// took a 20M-line ingest to 430 MB; with it, the heap stays near what is
// held, at the cost of a few more collections.
const MemoryLimit = 240 << 20

// limitMemory sets MemoryLimit unless a limit is set, and returns what
// restores the limit before.
func limitMemory() (restore func()) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return func() {}
	}
	debug.SetMemoryLimit(MemoryLimit)
	return func() { debug.SetMemoryLimit(math.MaxInt64) }
}
