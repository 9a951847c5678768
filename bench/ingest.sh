#!/usr/bin/env bash
# Measures `stormaudit ingest` end to end: generates N seed-format lines
# (default 2,000,000, about 350 MB) for 50,000 devices, ingests them RUNS
# times (default 3) and prints records/s and peak RSS of each run and their
# medians. Needs /usr/bin/time (Debian package "time").
#
#   bench/ingest.sh                 # 2,000,000 lines
#   LINES=10000000 bench/ingest.sh  # the memory target: 10,000,000 lines
set -euo pipefail
cd "$(dirname "$0")/.."
LINES=${LINES:-2000000}
DEVICES=${DEVICES:-50000}
RUNS=${RUNS:-3}
WORK=${WORK:-$(mktemp -d)}
trap 'rm -rf "$WORK"' EXIT
[ -x /usr/bin/time ] || { echo "bench/ingest.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

go build -o "$WORK/stormaudit" ./cmd/stormaudit
go run ./bench/genlog -lines "$LINES" -devices "$DEVICES" > "$WORK/input.ndjson"
size=$(stat -c %s "$WORK/input.ndjson")
echo "input: $LINES lines, $((size / 1000000)) MB, $DEVICES devices; $(nproc) cores; $(go version | cut -d' ' -f3)"

rates=(); rss=()
for i in $(seq "$RUNS"); do
  rm -rf "$WORK/ds"
  /usr/bin/time -v -o "$WORK/time.txt" "$WORK/stormaudit" ingest -q -o "$WORK/ds" "$WORK/input.ndjson"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(j=1;j<=n;j++) s=s*60+a[j]; print s}' "$WORK/time.txt")
  kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
  cpu=$(awk -F': ' '/Percent of CPU/ {print $2}' "$WORK/time.txt")
  rate=$(awk -v n="$LINES" -v s="$wall" 'BEGIN {printf "%.0f", n/s}')
  echo "run $i: ${wall}s, $rate records/s, peak RSS $((kb / 1024)) MB, CPU $cpu"
  rates+=("$rate"); rss+=("$kb")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median: $(median "${rates[@]}") records/s, peak RSS $(( $(median "${rss[@]}") / 1024 )) MB"
echo "output: $(du -sm "$WORK/ds" | cut -f1) MB of Parquet"
