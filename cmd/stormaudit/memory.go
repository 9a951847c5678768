package main

import (
	"context"
	"math"
	"runtime/debug"
	"strconv"

	"github.com/stormaudit/stormaudit/auditfmt"
	"github.com/stormaudit/stormaudit/dataset"
	"github.com/stormaudit/stormaudit/ingest"
	"github.com/stormaudit/stormaudit/internal/sysmem"
	"github.com/stormaudit/stormaudit/replay"
)

// availableMemory returns the memory available for a new program, in
// bytes, or 0 when the system does not say.
func availableMemory() int64 { return sysmem.Available() }

// gib formats bytes in GiB.
func gib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<30), 'f', 1, 64) + " GiB" }

// The process's memory limit is main's to set, not a library's: the
// commands set it here, around the work that needs it.

// limitMemory sets the process's soft memory limit (runtime/debug) to
// limit unless a limit is set (GOMEMLIMIT, or an outer call), and
// returns what restores the limit before.
func limitMemory(limit int64) (restore func()) {
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return func() {}
	}
	debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(math.MaxInt64) }
}

// ingestRun is ingest.Run under ingest.MemoryLimit: every command that
// ingests a dataset calls it.
func ingestRun(ctx context.Context, dir string, sources []ingest.Source, opts ingest.Options) (*dataset.Manifest, error) {
	defer limitMemory(ingest.MemoryLimit)()
	return ingest.Run(ctx, dir, sources, opts)
}

// ingestScan is ingest.Scan under ingest.MemoryLimit: check of raw logs
// calls it.
func ingestScan(ctx context.Context, dir string, sources []ingest.Source, opts ingest.Options, fn func([]auditfmt.Record) error) (*dataset.Manifest, error) {
	defer limitMemory(ingest.MemoryLimit)()
	return ingest.Scan(ctx, dir, sources, opts, fn)
}

// tuneReplayGC sets the garbage collector for a replay and returns what
// restores it: no collection until the process reaches
// replay.MemoryLimit of available (the memory available, in bytes), or
// the lower limit it was given (GOMEMLIMIT). replay says why; stormaudit
// replay calls it.
func tuneReplayGC(available int64) (restore func()) {
	gc := debug.SetGCPercent(-1)
	mem := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(min(mem, replay.MemoryLimit(available)))
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(mem)
	}
}
