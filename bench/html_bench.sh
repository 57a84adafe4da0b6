#!/bin/bash
# HTML report benchmark (docs/html.md): writes a synthetic recording of FUNCS functions
# (default 50 000) and CALLS calls (default 20 M) with bench/html_gen_trace.cpp, times
# `callmon html` on it, and has headless Chromium (playwright-core, installed into
# BUILD/tests/browser by tests/browser/npm_ci.cmake as for the browser tests) load the
# page: time to the first
# view, to a function section, to sort the flat table, to zoom the flame graph
# (bench/html_bench.js). Run by hand after building:
#
#   bench/html_bench.sh [BUILD_DIR] [CALLS] [FUNCS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
calls=${2:-20000000}
funcs=${3:-50000}
callmon=$build/bin/callmon
[ -x "$callmon" ] || { echo "no $callmon: build callmon first" >&2; exit 1; }
cmake -DSRC="$root/tests/browser" -DWORK="$build/tests/browser" -DNPM="$(command -v npm)" \
      -P "$root/tests/browser/npm_ci.cmake"
work=$(mktemp -d /tmp/callmon-html-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

g++ -std=c++20 -O2 -I"$root" -I"$root/include" "$root/bench/html_gen_trace.cpp" \
    "$build/lib/libcallmon_format.a" -lfmt -o "$work/gen"
written=$("$work/gen" "$work/rec" "$calls" "$funcs")
echo "recording: $written calls, $funcs functions, $(du -sm "$work/rec" | cut -f1) MB"
start=$(date +%s.%N)
"$callmon" html -d "$work/rec" -o "$work/page.html"
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v b="$(stat -c %s "$work/page.html")" \
  'BEGIN{printf "callmon html: %.2f s, page %.2f MB\n", e - s, b / 1048576}'
node "$root/bench/html_bench.js" "$build/tests/browser/node_modules" "$work/page.html"
