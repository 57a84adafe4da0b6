#!/bin/bash
# Analysis benchmark: times `callmon report` on synthetic traces of two sizes (default 50 M
# and 150 M calls) and shows its peak RSS, which must not grow with the trace. The traces
# are written by bench/gen_trace.cpp with the format library's ThreadWriter, in THREADS
# threads of one process (default 1; more shows the parallel walk). Run by hand after
# building (cmake --build build):
#
#   bench/report_bench.sh [BUILD_DIR] [CALLS1] [CALLS2] [THREADS]
#
# Times: the median of 5 runs, wall clock and CPU (user + system; the steadier figure on a
# shared machine, and the one that shows what the parallel walk costs in all).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
sizes=("${2:-50000000}" "${3:-150000000}")
threads=${4:-1}
callmon=$build/bin/callmon
[ -x "$callmon" ] || { echo "no $callmon: build callmon first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d /tmp/callmon-report-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

g++ -std=c++20 -O2 -I"$root" -I"$root/include" "$root/bench/gen_trace.cpp" \
    "$build/lib/libcallmon_format.a" -lfmt -o "$work/gen_trace"

printf '%-12s %8s %10s %10s %10s %12s %12s\n' calls threads trace_MB report_s cpu_s Mcalls/s peak_RSS_MB
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for calls in "${sizes[@]}"; do
  dir=$work/trace_$calls
  written=$("$work/gen_trace" "$dir" "$calls" 20 "$threads")
  mb=$(du -sm "$dir" | cut -f1)
  : > "$work/walls"
  : > "$work/cpus"
  best_rss=""
  for run in 1 2 3 4 5; do
    /usr/bin/time -v -o "$work/time.txt" "$callmon" report --format=json -d "$dir" > "$work/report.json"
    awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$work/time.txt" >> "$work/walls"
    awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {print u+s}' "$work/time.txt" >> "$work/cpus"
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
    if [ -z "$best_rss" ] || [ "$rss" -gt "$best_rss" ]; then best_rss=$rss; fi
  done
  wall=$(median < "$work/walls")
  cpu=$(median < "$work/cpus")
  # The report must account for every call: compare with what was written.
  python3 - "$work/report.json" "$written" <<'PY'
import json, sys
functions = json.load(open(sys.argv[1]))["functions"]
total = sum(f["calls"] for f in functions)
if total != int(sys.argv[2]):
    sys.exit(f"report counted {total} calls, the trace holds {sys.argv[2]}")
PY
  awk -v c="$written" -v t="$threads" -v mb="$mb" -v s="$wall" -v u="$cpu" -v r="$best_rss" \
    'BEGIN{printf "%-12d %8d %10d %10.2f %10.2f %12.1f %12.1f\n", c, t, mb, s, u, c/s/1e6, r/1024}'
  rm -rf "$dir"
done
echo "(report time: median of 5 runs, wall clock and CPU; Mcalls/s from the wall clock;"
echo " peak RSS: the largest of them)"
