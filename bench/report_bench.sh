#!/bin/bash
# Analysis benchmark: times `callmon report` on synthetic traces of two sizes (default 50 M
# and 150 M calls) and shows its peak RSS, which must not grow with the trace. The traces
# are written by bench/gen_trace.cpp with the format library's ThreadWriter. Run by hand
# after building (cmake --build build):
#
#   bench/report_bench.sh [BUILD_DIR] [CALLS1] [CALLS2]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
sizes=("${2:-50000000}" "${3:-150000000}")
callmon=$build/bin/callmon
[ -x "$callmon" ] || { echo "no $callmon: build callmon first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d /tmp/callmon-report-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

g++ -std=c++20 -O2 -I"$root" -I"$root/include" "$root/bench/gen_trace.cpp" \
    "$build/lib/libcallmon_format.a" -lfmt -o "$work/gen_trace"

printf '%-12s %10s %10s %12s %12s\n' calls trace_MB report_s Mcalls/s peak_RSS_MB
for calls in "${sizes[@]}"; do
  dir=$work/trace_$calls
  written=$("$work/gen_trace" "$dir" "$calls")
  mb=$(du -sm "$dir" | cut -f1)
  best=""
  best_rss=""
  for run in 1 2 3; do
    /usr/bin/time -v -o "$work/time.txt" "$callmon" report --format=json -d "$dir" > "$work/report.json"
    secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
    if [ -z "$best" ] || awk "BEGIN{exit !($secs < $best)}"; then best=$secs; fi
    if [ -z "$best_rss" ] || [ "$rss" -gt "$best_rss" ]; then best_rss=$rss; fi
  done
  # The report must account for every call: compare with what was written.
  python3 - "$work/report.json" "$written" <<'PY'
import json, sys
functions = json.load(open(sys.argv[1]))["functions"]
total = sum(f["calls"] for f in functions)
if total != int(sys.argv[2]):
    sys.exit(f"report counted {total} calls, the trace holds {sys.argv[2]}")
PY
  awk -v c="$written" -v mb="$mb" -v s="$best" -v r="$best_rss" \
    'BEGIN{printf "%-12d %10d %10.2f %12.1f %12.1f\n", c, mb, s, c/s/1e6, r/1024}'
  rm -rf "$dir"
done
echo "(report time: best of 3 runs; peak RSS: the largest of them)"
