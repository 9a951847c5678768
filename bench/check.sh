#!/usr/bin/env bash
# Measures `stormaudit check`: builds two datasets with `simulate` (a 100
# minute outage of 5,000 and of 50,000 devices under the full-jitter
# preset: about 1.07M and 10.7M records), checks each RUNS times (default
# 3) with every rule, once with the fleet's policy declared (--policy
# full-jitter) and once inferring it from the log (a first pass over the
# first 262,144 records), and prints records/s and peak RSS of each run,
# their medians, and the ratio of the two datasets' median times (linear
# cost: at most 11). Needs /usr/bin/time (Debian package "time").
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
WORK=${WORK:-$(mktemp -d)}
trap 'rm -rf "$WORK"' EXIT
[ -x /usr/bin/time ] || { echo "bench/check.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

go build -o "$WORK/stormaudit" ./cmd/stormaudit
echo "$(nproc) cores; $(go version | cut -d' ' -f3)"
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A med
check() { # check LABEL DATASET RECORDS [FLAGS...]: RUNS runs, median time in $med[LABEL]
  local label=$1 ds=$2 records=$3; shift 3
  local walls=() rates=() rss=()
  for i in $(seq "$RUNS"); do
    /usr/bin/time -v -o "$WORK/time.txt" "$WORK/stormaudit" check "$@" --fail-on none --format json --output "$WORK/report.json" "$ds"
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(j=1;j<=n;j++) s=s*60+a[j]; print s}' "$WORK/time.txt")
    kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
    cpu=$(awk -F': ' '/Percent of CPU/ {print $2}' "$WORK/time.txt")
    rate=$(awk -v n="$records" -v s="$wall" 'BEGIN {printf "%.0f", n/s}')
    echo "  $label run $i: ${wall}s, $rate records/s, peak RSS $((kb / 1024)) MB, CPU $cpu"
    walls+=("$wall"); rates+=("$rate"); rss+=("$kb")
  done
  med[$label]=$(median "${walls[@]}")
  echo "  $label median: ${med[$label]}s, $(median "${rates[@]}") records/s, peak RSS $(( $(median "${rss[@]}") / 1024 )) MB"
}
for devices in 5000 50000; do
  ds="$WORK/ds-$devices"
  "$WORK/stormaudit" simulate -q -n "$devices" --outage 100m --seed 1 --dataset "$ds" 2>/dev/null
  records=$(sed -n 's/^  "rows": \([0-9]*\),$/\1/p' "$ds/manifest.json")
  echo "dataset: $devices devices, $records records, $(du -sm "$ds" | cut -f1) MB of Parquet"
  check "declared-$devices" "$ds" "$records" --policy full-jitter
  check "inferred-$devices" "$ds" "$records"
done
for p in declared inferred; do
  awk -v a="${med[$p-5000]}" -v b="${med[$p-50000]}" -v p="$p" 'BEGIN {printf "%s policy: 10x the records took %.1fx the time\n", p, b/a}'
done
