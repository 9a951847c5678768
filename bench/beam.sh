#!/usr/bin/env bash
# Measures stormaudit-beam against stormaudit check in the same run: a
# simulated outage of DEVICES devices (default 124,000: about 2M records)
# ingested with --buckets BUCKETS (default 64); each is run RUNS times
# (default 3), taking turns, on Prism in process; prints each run's wall
# time, CPU and peak RSS, the medians, and whether the two wrote the same
# JSON. Then BenchmarkSplit on the same dataset: a part's records/s on one
# core (a worker), the bytes per record of what each step ships (what is
# shuffled), the most heap the finishing worker holds (in a process of
# its own) and the finishing step's time (the one step that runs in one
# place). The first build of stormaudit-beam
# compiles Beam (about 5 minutes). Needs /usr/bin/time (Debian "time").
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
DEVICES=${DEVICES:-124000}
BUCKETS=${BUCKETS:-64}
WORK=${WORK:-$(mktemp -d)}
trap 'rm -rf "$WORK"' EXIT
[ -x /usr/bin/time ] || { echo "bench/beam.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

go build -o "$WORK/stormaudit" ./cmd/stormaudit
(cd cmd/stormaudit-beam && go build -o "$WORK/stormaudit-beam" .)
echo "$(nproc) cores; $(go version | cut -d' ' -f3)"
"$WORK/stormaudit" simulate -q -n "$DEVICES" --seed 1 -o "$WORK/sim.ndjson"
"$WORK/stormaudit" ingest -q --buckets "$BUCKETS" -o "$WORK/ds" "$WORK/sim.ndjson"
rm "$WORK/sim.ndjson"
records=$(sed -n 's/^  "rows": \([0-9]*\),$/\1/p' "$WORK/ds/manifest.json")
echo "dataset: $DEVICES devices, $records records, $BUCKETS buckets, $(du -sm "$WORK/ds" | cut -f1) MB of Parquet"

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A walls
run() { # run LABEL BINARY: one run, its JSON in $WORK/LABEL.json
  local label=$1 bin=$2
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.txt" "$bin" check --fail-on none --format json --output "$WORK/$label.json" "$WORK/ds"
  read -r wall user sys kb < "$WORK/time.txt"
  echo "  $label: ${wall}s wall, $(awk -v u="$user" -v s="$sys" 'BEGIN {print u+s}')s CPU, peak RSS $((kb / 1024)) MB"
  walls[$label]+="$wall "
}
for i in $(seq "$RUNS"); do
  echo "run $i"
  run check "$WORK/stormaudit"
  run beam "$WORK/stormaudit-beam"
done
c=$(median ${walls[check]}) b=$(median ${walls[beam]})
echo "median: check ${c}s, stormaudit-beam ${b}s ($(awk -v b="$b" -v c="$c" 'BEGIN {printf "%.1f", b/c}')x)"
if cmp -s "$WORK/check.json" "$WORK/beam.json"; then echo "same JSON: yes"; else echo "same JSON: NO"; exit 1; fi

echo "BenchmarkSplit (one core, then two):"
STORMAUDIT_BENCH_DATASET="$WORK/ds" go test ./analyze -run '^$' -bench Split -benchtime 1x -count "$RUNS" -cpu 1,2 | grep '^Benchmark'
