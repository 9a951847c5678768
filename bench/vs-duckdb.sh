#!/usr/bin/env bash
# Measures stormaudit against DuckDB on the same work, on two shapes of
# input (SHAPES, default both): "interleaved", records in time order with
# the devices interleaved, as a collector receives them, and "grouped",
# each device's records together, as when every device uploads a file of
# its own and the files are concatenated; and "fleet", a simulated fleet
# of D devices through an outage that flaps six times (`stormaudit
# simulate --outage 60s --flaps 6 --policy fixed`, 79 records a device,
# grouped by device): seven incidents, where the others have one. For the
# first two it generates N seed-format lines (default 2,000,000) for D
# devices (default 20,000),
# then RUNS times (default 3) times the whole process of each tool, taking
# turns, on: ingest (NDJSON to sorted zstd Parquet), check with text and
# with JSON output, check of the raw NDJSON, and verify (against
# `openssl dgst -sha256` of the same log: no DuckDB peer).
# The DuckDB side is bench/duckdb (duckpeer, its own Go module: cgo and
# DuckDB's static library, about 170 MB, downloaded on its first build).
# Its check orders each device's records (a window by client_id) and
# computes three of the rules on them (delays above the ceiling, counters
# reset without a connect, socket-opens too close together), with the
# fleet's socket-opens per second: the work every rule does, ordering a
# device's records, without the other fourteen rules, the incidents and
# the explanations stormaudit writes. Prints each tool's median wall
# time, the ratio stormaudit/DuckDB and the median peak RSS of each tool.
# Needs /usr/bin/time (Debian package "time") and gcc.
#
#   bench/vs-duckdb.sh
#   LINES=200000 DEVICES=2000 RUNS=1 bench/vs-duckdb.sh   # a quick try
#   SHAPES=grouped bench/vs-duckdb.sh                      # one shape
set -euo pipefail
cd "$(dirname "$0")/.."
LINES=${LINES:-2000000}
DEVICES=${DEVICES:-20000}
RUNS=${RUNS:-3}
SHAPES=${SHAPES:-interleaved grouped fleet}
WORK=${WORK:-$(mktemp -d)}
trap 'rm -rf "$WORK"' EXIT
[ -x /usr/bin/time ] || { echo "bench/vs-duckdb.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

go build -o "$WORK/stormaudit" ./cmd/stormaudit
(cd bench/duckdb && go build -o "$WORK/duckpeer" .)
summary=()

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN {printf "%.1f", b/1e6}'; }
# timed MAXRC OUT CMD...: runs CMD under /usr/bin/time, stdout to OUT; an
# exit status above MAXRC stops the script. Sets wall (seconds) and kb (peak RSS).
timed() {
  local maxrc=$1 out=$2 rc=0; shift 2
  /usr/bin/time -v -o "$WORK/time.txt" "$@" > "$out" 2> "$WORK/stderr.txt" || rc=$?
  if [ "$rc" -gt "$maxrc" ]; then
    echo "bench/vs-duckdb.sh: exit status $rc from: $*" >&2; cat "$WORK/stderr.txt" >&2; exit 2
  fi
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(j=1;j<=n;j++) s=s*60+a[j]; print s}' "$WORK/time.txt")
  kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$WORK/time.txt")
}
# compare LABEL SA_MAXRC SA_OUT PEER_OUT: RUNS runs of the commands in the
# arrays sa (stormaudit) and peer (DuckDB), taking turns.
compare() {
  local label=$1 samax=$2 saout=$3 peerout=$4 sawalls=() sarss=() peerwalls=() peerrss=()
  for i in $(seq "$RUNS"); do
    if [ "$label" = ingest ]; then rm -rf "$WORK/ds" "$WORK/peer.parquet"; fi
    timed "$samax" "$saout" "${sa[@]}"; sawalls+=("$wall"); sarss+=("$kb")
    timed 0 "$peerout" "${peer[@]}"; peerwalls+=("$wall"); peerrss+=("$kb")
    echo "  $label run $i: stormaudit ${sawalls[-1]}s, peak RSS $((sarss[-1] / 1024)) MB; DuckDB ${peerwalls[-1]}s, peak RSS $((peerrss[-1] / 1024)) MB"
  done
  local s p
  s=$(median "${sawalls[@]}"); p=$(median "${peerwalls[@]}")
  local line
  line=$(awk -v l="$label" -v s="$s" -v p="$p" -v sr="$(median "${sarss[@]}")" -v pr="$(median "${peerrss[@]}")" \
    'BEGIN {printf "%s median: stormaudit %.2fs, DuckDB %.2fs, stormaudit/DuckDB %.2f; peak RSS stormaudit %d MB, DuckDB %d MB", l, s, p, s/p, sr/1024, pr/1024}')
  echo "$line"
  summary+=("$shape $line")
}

for shape in $SHAPES; do
if [ "$shape" = fleet ]; then
  # the first field is the client id: a stable sort groups each device's records, in time order
  "$WORK/stormaudit" simulate -n "$DEVICES" --outage 60s --flaps 6 --policy fixed --seed 2 -o - 2> /dev/null |
    LC_ALL=C sort -s -t, -k1,1 > "$WORK/input.ndjson"
else
  flags=()
  [ "$shape" = grouped ] && flags=(-grouped)
  go run ./bench/genlog -lines "$LINES" -devices "$DEVICES" "${flags[@]}" > "$WORK/input.ndjson"
fi
size=$(stat -c %s "$WORK/input.ndjson")
echo "== $shape: $(wc -l < "$WORK/input.ndjson") lines, $((size / 1000000)) MB, $DEVICES devices; $(nproc) cores; $(go version | cut -d' ' -f3); $("$WORK/duckpeer" version)"

sa=("$WORK/stormaudit" ingest -q -o "$WORK/ds" "$WORK/input.ndjson")
peer=("$WORK/duckpeer" ingest "$WORK/input.ndjson" "$WORK/peer.parquet")
compare ingest 0 /dev/null /dev/null
echo "  output: stormaudit $(du -sm "$WORK/ds" | cut -f1) MB dataset, DuckDB $(mb "$WORK/peer.parquet") MB Parquet"

# stormaudit check exits 1 when it finds something: a success here.
sa=("$WORK/stormaudit" check -q --policy full-jitter "$WORK/ds")
peer=("$WORK/duckpeer" check "$WORK/peer.parquet")
compare "check text" 1 /dev/null /dev/null

sa=("$WORK/stormaudit" check -q --policy full-jitter --format json "$WORK/ds")
peer=("$WORK/duckpeer" check-json "$WORK/peer.parquet" "$WORK/peer.json")
compare "check json" 1 "$WORK/out.json" /dev/null
echo "  output: stormaudit $(mb "$WORK/out.json") MB of JSON findings, DuckDB $(mb "$WORK/peer.json") MB of JSON per device; input $(mb "$WORK/input.ndjson") MB"

sa=("$WORK/stormaudit" check -q --policy full-jitter "$WORK/input.ndjson")
peer=("$WORK/duckpeer" check-ndjson "$WORK/input.ndjson")
compare "check raw" 1 /dev/null /dev/null

# verify has no DuckDB peer: it is measured against openssl dgst -sha256
# of the source log, in MB/s of that log and of canonical record bytes.
canonical() {
  if command -v jq > /dev/null; then jq -r .canonical_bytes "$1"
  else python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["canonical_bytes"])' "$1"; fi
}
mbs=(); logmbs=(); walls=(); rss=(); ssl=()
for i in $(seq "$RUNS"); do
  timed 0 "$WORK/report.json" "$WORK/stormaudit" verify --format json "$WORK/ds"
  rate=$(awk -v b="$(canonical "$WORK/report.json")" -v s="$wall" 'BEGIN {printf "%.0f", b/s/1e6}')
  lograte=$(awk -v b="$size" -v s="$wall" 'BEGIN {printf "%.0f", b/s/1e6}')
  mbs+=("$rate"); logmbs+=("$lograte"); walls+=("$wall"); rss+=("$kb")
  timed 0 /dev/null openssl dgst -sha256 "$WORK/input.ndjson"; ssl+=("$wall")
  echo "  verify run $i: stormaudit ${walls[-1]}s, $lograte MB/s of the log, $rate MB/s of canonical bytes, peak RSS $((rss[-1] / 1024)) MB; openssl dgst -sha256 ${ssl[-1]}s"
done
line=$(awk -v s="$(median "${walls[@]}")" -v o="$(median "${ssl[@]}")" -v lm="$(median "${logmbs[@]}")" -v cm="$(median "${mbs[@]}")" -v r="$(median "${rss[@]}")" \
  'BEGIN {printf "verify median: stormaudit %.2fs, %d MB/s of the log (%d MB/s of canonical bytes), openssl dgst -sha256 %.2fs, stormaudit/openssl %.2f; peak RSS %d MB", s, lm, cm, o, s/o, r/1024}')
echo "$line"
summary+=("$shape $line")
done

echo "== summary"
printf '%s\n' "${summary[@]}"
