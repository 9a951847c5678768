#!/usr/bin/env bash
# Measures `stormaudit verify`: ingests N generated lines (default 2,000,000
# for 50,000 devices) once, then verifies the dataset RUNS times (default 3)
# and prints MB/s of canonical record bytes, records/s and peak RSS of each
# run and their medians. Needs /usr/bin/time (Debian package "time").
set -euo pipefail
cd "$(dirname "$0")/.."
LINES=${LINES:-2000000}
DEVICES=${DEVICES:-50000}
RUNS=${RUNS:-3}
WORK=${WORK:-$(mktemp -d)}
trap 'rm -rf "$WORK"' EXIT
[ -x /usr/bin/time ] || { echo "bench/verify.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

go build -o "$WORK/stormaudit" ./cmd/stormaudit
go run ./bench/genlog -lines "$LINES" -devices "$DEVICES" > "$WORK/input.ndjson"
"$WORK/stormaudit" ingest -q -o "$WORK/ds" "$WORK/input.ndjson"
rm "$WORK/input.ndjson"
echo "dataset: $LINES lines, $DEVICES devices, $(du -sm "$WORK/ds" | cut -f1) MB of Parquet; $(nproc) cores; $(go version | cut -d' ' -f3)"

rates=(); mbs=(); rss=()
for i in $(seq "$RUNS"); do
  /usr/bin/time -v -o "$WORK/time.txt" "$WORK/stormaudit" verify --format json "$WORK/ds" > "$WORK/report.json"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(j=1;j<=n;j++) s=s*60+a[j]; print s}' "$WORK/time.txt")
  kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
  cpu=$(awk -F': ' '/Percent of CPU/ {print $2}' "$WORK/time.txt")
  bytes=$(sed -n 's/.*"canonical_bytes": \([0-9]*\).*/\1/p' "$WORK/report.json")
  records=$(sed -n 's/^  "records": \([0-9]*\).*/\1/p' "$WORK/report.json")
  rate=$(awk -v n="$records" -v s="$wall" 'BEGIN {printf "%.0f", n/s}')
  mb=$(awk -v b="$bytes" -v s="$wall" 'BEGIN {printf "%.0f", b/s/1e6}')
  echo "run $i: ${wall}s, $mb MB/s of canonical bytes, $rate records/s, peak RSS $((kb / 1024)) MB, CPU $cpu"
  rates+=("$rate"); mbs+=("$mb"); rss+=("$kb")
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median: $(median "${mbs[@]}") MB/s, $(median "${rates[@]}") records/s, peak RSS $(( $(median "${rss[@]}") / 1024 )) MB"
