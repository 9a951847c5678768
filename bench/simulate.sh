#!/usr/bin/env bash
# Measures `stormaudit simulate`: one outage (default 60 s) of DEVICES
# devices (default 1,000,000) under each policy in POLICIES (default
# full-jitter and fixed), RUNS times each (default 3), streaming the NDJSON
# into a file. Prints wall time, records/s, MB written and peak RSS of each
# run and their medians. Needs /usr/bin/time (Debian package "time").
#
#   bench/simulate.sh
#   DEVICES=100000 POLICIES=autopaho bench/simulate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICES=${DEVICES:-1000000}
OUTAGE=${OUTAGE:-60s}
POLICIES=${POLICIES:-full-jitter fixed}
RUNS=${RUNS:-3}
WORK=${WORK:-$(mktemp -d)}
trap 'rm -rf "$WORK"' EXIT
[ -x /usr/bin/time ] || { echo "bench/simulate.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

go build -o "$WORK/stormaudit" ./cmd/stormaudit
echo "$DEVICES devices, $OUTAGE outage; $(nproc) cores; $(go version | cut -d' ' -f3)"
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for policy in $POLICIES; do
  walls=(); rss=(); rates=()
  for i in $(seq "$RUNS"); do
    rm -f "$WORK/out.ndjson"
    /usr/bin/time -v -o "$WORK/time.txt" "$WORK/stormaudit" simulate -n "$DEVICES" --outage "$OUTAGE" \
      --policy "$policy" --seed "$i" -o "$WORK/out.ndjson" 2> "$WORK/stats.txt"
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(j=1;j<=n;j++) s=s*60+a[j]; print s}' "$WORK/time.txt")
    kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
    cpu=$(awk -F': ' '/Percent of CPU/ {print $2}' "$WORK/time.txt")
    records=$(wc -l < "$WORK/out.ndjson")
    mb=$(( $(stat -c %s "$WORK/out.ndjson") / 1000000 ))
    rate=$(awk -v n="$records" -v s="$wall" 'BEGIN {printf "%.0f", n/s}')
    echo "$policy run $i: ${wall}s, $records records ($mb MB), $rate records/s, peak RSS $((kb / 1024)) MB, CPU $cpu"
    walls+=("$wall"); rss+=("$kb"); rates+=("$rate")
  done
  echo "$policy median: $(median "${walls[@]}")s, $(median "${rates[@]}") records/s, peak RSS $(( $(median "${rss[@]}") / 1024 )) MB"
  sed 's/^/  /' "$WORK/stats.txt"
done
