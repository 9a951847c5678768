#!/usr/bin/env bash
# Measures `stormaudit browse` (BenchmarkBrowse in package tui) on a
# dataset of 20,000 devices and about 1,000,000 records (an 18-minute
# outage under full jitter, made once and kept in $TMPDIR): the time to the
# first screen, the check that fills the views, the key presses (Update and
# View at 160x50: p50 and the slowest), opening a device's timeline, and
# the peak resident memory. Targets: first screen under 1 s, a key press
# under 50 ms, memory under 1 GB. RUNS runs (default 5); it prints the
# medians. The machine is shared: quote the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
echo "$(nproc) cores; $(go version | cut -d' ' -f3)"
go test -run XXX -bench 'Browse$' -benchtime "${RUNS}x" -timeout 30m ./tui |
  grep -E '^Benchmark|records$' | sed -E 's/^ +bench_test.go:[0-9]+: /    /'
