#!/bin/bash
# Export size and speed benchmark (docs/export.md, "Selection and size"): writes a synthetic
# recording with bench/gen_trace.cpp (default 10 M calls) and exports it as perfetto, chrome
# and speedscope, printing bytes, bytes per call, time and peak RSS of each, and what
# `--estimate` said beforehand. Run by hand after building (cmake --build build):
#
#   bench/export_bench.sh [BUILD_DIR] [CALLS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
calls=${2:-10000000}
callmon=$build/bin/callmon
[ -x "$callmon" ] || { echo "no $callmon: build callmon first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d /tmp/callmon-export-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

g++ -std=c++20 -O2 -I"$root" -I"$root/include" "$root/bench/gen_trace.cpp" \
    "$build/lib/libcallmon_format.a" -lfmt -o "$work/gen_trace"
written=$("$work/gen_trace" "$work/big.data" "$calls")
echo "recording: $written calls, $(du -sm "$work/big.data" | cut -f1) MB"
printf '%-11s %14s %9s %8s %8s %14s\n' format bytes B/call time_s RSS_MB estimate
for fmt in perfetto chrome speedscope; do
  est=$("$callmon" export -d "$work/big.data" --format="$fmt" --estimate |
        sed -E 's/.*\(([0-9]+) bytes\).*/\1/')
  /usr/bin/time -f '%e %M' -o "$work/time.txt" \
      "$callmon" export -d "$work/big.data" --format="$fmt" -o "$work/out.$fmt"
  read -r secs rss < "$work/time.txt"
  bytes=$(stat -c %s "$work/out.$fmt")
  printf '%-11s %14s %9.1f %8s %8d %14s\n' "$fmt" "$bytes" \
      "$(awk "BEGIN{print $bytes / $written}")" "$secs" $((rss / 1024)) "$est"
  rm -f "$work/out.$fmt"
done
