#!/usr/bin/env bash
# Measures `stormaudit browse` (BenchmarkBrowse in package tui) on two
# datasets of 20,000 devices losing the broker under full jitter (made once
# and kept in $TMPDIR): 1,008,669 records (an 18-minute outage) and
# 2,008,582 (43 minutes). For each: the time to the first screen with the
# fleet on it (the survey's first glimpse, drawn), to the last glimpse
# (every record read), to the loaded views (the check done, drawn), what
# drawing the glimpses cost, the key presses (Update and View at 160x50:
# p50 and the slowest), opening a device's timeline, and the peak resident
# memory. Targets: first screen under 1 s at 2M records, a key press
# under 50 ms, memory under 1 GB. RUNS runs (default 5); it prints the
# medians. The machine is shared: quote the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
echo "$(nproc) cores; $(go version | cut -d' ' -f3)"
go test -run XXX -bench 'Browse$' -benchtime "${RUNS}x" -timeout 30m ./tui |
  grep -E '^Benchmark|records$' | sed -E 's/^ +bench_test.go:[0-9]+: /    /'
