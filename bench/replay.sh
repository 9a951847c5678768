#!/usr/bin/env bash
# Measures `stormaudit replay` against the embedded broker: 10,000 devices
# connecting evenly over 2 s (5,000 connects/s; targets: at least 5,000
# connects/s sustained, p99 schedule lateness at most 5 ms) and 2,000
# devices over 5 s against a capacity of 100 connects/s (target: accepted
# rate within 1% of 100/s). RUNS replays each (default 5); it prints each
# run and the medians. The machine is shared: quote the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
echo "$(nproc) cores; $(go version | cut -d' ' -f3)"
go test -run XXX -bench 'Replay' -benchtime "${RUNS}x" -timeout 30m ./replay |
  grep -E '^Benchmark|run [0-9]+:' |
  sed -E 's/^ +bench_test.go:[0-9]+: /    /'
