#!/bin/bash
# What a compensated clock in whole ticks (the clock a split walk of one thread needs,
# docs/report.md, "Splitting one thread") would change in a recording's flat profile:
# generates CallWalkerWT from analysis/call_walk.hpp (the probe parts of each record rounded
# down or up to whole ticks by a hash of the record's time), builds
# bench/whole_tick_clock.cpp against a build's libraries and runs it. Run by hand:
#
#   bench/whole_tick_clock.sh [BUILD_DIR] RECORDING
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
rec=${2:?usage: whole_tick_clock.sh [BUILD_DIR] RECORDING}
[ -f "$build/lib/libcallmon_analysis.a" ] || { echo "no $build/lib: build callmon first" >&2; exit 1; }
work=$(mktemp -d /tmp/callmon-whole-tick.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 - "$root/analysis/call_walk.hpp" "$work/whole_tick_walk.hpp" <<'PY'
import sys
src = open(sys.argv[1]).read()
a = src.index("template <class Sink>\nclass CallWalker {")
b = src.index("// walk_thread's loop when decoding inline")
cls = src[a:b].replace("class CallWalker {", "class CallWalkerWT {")
cls = cls.replace("explicit CallWalker(Sink& sink)", "explicit CallWalkerWT(Sink& sink)")
old = """    d -= cost_due_ + hidden_due_ + before;
    cost_due_ = after;"""
assert old in cls, "advance_clock_to changed: update bench/whole_tick_clock.sh"
cls = cls.replace(old, """    const double h = whole_hash(ticks);
    d -= std::floor(cost_due_ + h) + std::floor(hidden_due_ + h) + std::floor(before + (1 - h));
    cost_due_ = after;""")
anchor = "  // The conversions between ticks and doubles"
assert anchor in cls
cls = cls.replace(anchor, """  // In [0, 1), from a record's time: which way its fractional parts round.
  static double whole_hash(uint64_t t) {
    uint64_t x = t * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    return static_cast<double>(x >> 11) * 0x1.0p-53;
  }
""" + anchor, 1)
open(sys.argv[2], "w").write("#pragma once\n#include \"analysis/call_walk.hpp\"\n"
                             "namespace callmon::analysis {\n" + cls + "}\n")
PY
g++ -std=c++20 -O2 -I"$work" -I"$root" -I"$root/include" "$root/bench/whole_tick_clock.cpp" \
    "$build/lib/libcallmon_analysis.a" "$build/lib/libcallmon_format.a" -lfmt -o "$work/whole_tick_clock"
echo "recording $rec; load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$work/whole_tick_clock" "$rec"
