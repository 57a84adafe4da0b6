#!/bin/bash
# `report` and `html` on a recording full of coroutine switches (docs/report.md, "Min and max
# of calls cut by coroutine switches"): tests/programs/boost_fiber.cpp built with
# -finstrument-functions, two fibers switched to and from ROUNDS times each (every switch
# suspends a context and resumes another, whose calls report joins back into whole calls),
# recorded once with NEW_BUILD's callmon, then analysed by both builds, their runs
# interleaved. Prints per build and command the median wall and user CPU seconds and the
# load average. Run by hand after building both:
#
#   bench/switch_report_bench.sh OLD_BUILD_DIR [NEW_BUILD_DIR] [ROUNDS] [RUNS]
#
# Defaults: build, 1000000 rounds, 5 runs. Needs libboost-context-dev and /usr/bin/time.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
old=${1:?usage: switch_report_bench.sh OLD_BUILD_DIR [NEW_BUILD_DIR] [ROUNDS] [RUNS]}
new=${2:-$root/build}
rounds=${3:-1000000}
runs=${4:-5}
for b in "$old" "$new"; do
  [ -x "$b/bin/callmon" ] || { echo "no $b/bin/callmon: build callmon first" >&2; exit 1; }
done
work=$(mktemp -d /tmp/callmon-switch-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

g++ -O2 -g -finstrument-functions "$root/tests/programs/boost_fiber.cpp" -lboost_context \
    -o "$work/fiber"
"$new/bin/callmon" record -o "$work/rec" -- "$work/fiber" "$rounds" > /dev/null
echo "recording: $("$new/bin/callmon" info -d "$work/rec" | grep -m1 -o '[0-9]* calls' || true)," \
     "$("$new/bin/callmon" replay -d "$work/rec" --no-pager | grep -c '\[suspended\]') pieces ended" \
     "by a switch"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A walls users
for ((r = 0; r < runs; r++)); do
  for b in old new; do
    dir=$old
    [ $b = new ] && dir=$new
    for cmd in report html; do
      out=/dev/null
      args=(report -d "$work/rec" --no-pager)
      [ $cmd = html ] && args=(html -d "$work/rec" -o "$work/out.html")
      /usr/bin/time -f '%e %U' -o "$work/time" "$dir/bin/callmon" "${args[@]}" > "$out" 2>&1
      read -r wall user < "$work/time"
      walls[$b.$cmd]+="$wall "
      users[$b.$cmd]+="$user "
    done
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-5s %8s %8s\n' command build wall_s user_s
for cmd in report html; do
  for b in old new; do
    printf '%-8s %-5s %8s %8s\n' $cmd $b "$(echo "${walls[$b.$cmd]}" | median)" \
        "$(echo "${users[$b.$cmd]}" | median)"
  done
done
