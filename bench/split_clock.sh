#!/bin/bash
# Splitting one thread's walk (docs/report.md, "Splitting one thread"): builds
# bench/split_clock.cpp and bench/split_walk_bound.cpp against a build's libraries and runs
# them on a recording (default: a synthetic one of bench/gen_trace.cpp, 20 M calls in one
# thread, with a probe cost added to its meta file as a real recording has). Run by hand:
#
#   bench/split_clock.sh [BUILD_DIR] [RECORDING] [ROUNDS]
#
# split_clock: how many calls get other figures when the compensated clock enters the
# stream at another fractional offset (0, 1, 2, 3 and 5 extra calls before it).
# split_walk_bound: the serial walk as `report` does it against two ranges of chunks walked
# on the two cores (not exact: a bound). clock_chain_cost: the CPU of decoding the thread
# in runs, and what the compensated clock's chain adds to it (the price of the clock on the
# decoder's core).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
rec=${2:-}
rounds=${3:-3}
[ -f "$build/lib/libcallmon_analysis.a" ] || { echo "no $build/lib: build callmon first" >&2; exit 1; }
work=$(mktemp -d /tmp/callmon-split-clock.XXXXXX)
trap 'rm -rf "$work"' EXIT
libs=("$build/lib/libcallmon_analysis.a" "$build/lib/libcallmon_format.a" -lfmt -lpthread)
for tool in split_clock split_walk_bound clock_chain_cost; do
  g++ -std=c++20 -O2 -I"$root" -I"$root/include" "$root/bench/$tool.cpp" "${libs[@]}" \
      -o "$work/$tool"
done
if [ -z "$rec" ]; then
  g++ -std=c++20 -O2 -I"$root" -I"$root/include" "$root/bench/gen_trace.cpp" \
      "$build/lib/libcallmon_format.a" -lfmt -o "$work/gen_trace"
  "$work/gen_trace" "$work/rec" 20000000 20 1 > /dev/null
  printf 'overhead 7.300 13.900\noverhead-overlap 1.5 2.25\n' >> "$work"/rec/*.meta
  rec=$work/rec
fi
echo "recording $rec; load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/split_clock" "$rec" 0 1 2 3 5
"$work/split_walk_bound" "$rec" "$rounds"
"$work/clock_chain_cost" "$rec" "$rounds"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
