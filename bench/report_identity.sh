#!/bin/bash
# `report` must print byte for byte what an older build printed (a speed change to the call
# walk or the decoder changes no figure): runs both builds on the same recordings and
# compares their text and --json outputs. Run by hand after building both:
#
#   bench/report_identity.sh OLD_BUILD_DIR [NEW_BUILD_DIR] [BIG_RECORDING...]
#
# Recordings: each BIG_RECORDING given (e.g. /work/realprog/shared/sqlite-fi, one big thread:
# the decoder runs ahead there), and made here with NEW_BUILD_DIR (default build):
# a 64-thread synthetic one and a one-thread synthetic one with a probe cost and an overlap
# in its meta file (bench/gen_trace.cpp), and recordings of the -finstrument-functions test
# programs with C++ exceptions, longjmp and fork (tests/programs). Each is reported with the
# decoder ahead of the walk on every thread (CALLMON_PREFETCH_MIN_BYTES=0) and inline
# (a threshold no thread reaches). Exit status 1 when any output differs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
old=${1:?usage: report_identity.sh OLD_BUILD_DIR [NEW_BUILD_DIR] [RECORDING...]}
new=${2:-$root/build}
shift $(($# < 2 ? $# : 2))
for b in "$old" "$new"; do
  [ -x "$b/bin/callmon" ] || { echo "no $b/bin/callmon: build callmon first" >&2; exit 1; }
done
old=$(cd "$old" && pwd)
new=$(cd "$new" && pwd)
work=$(mktemp -d /tmp/callmon-report-identity.XXXXXX)
trap 'rm -rf "$work"' EXIT

recs=("$@")
g++ -std=c++20 -O2 -I"$root" -I"$root/include" "$root/bench/gen_trace.cpp" \
    "$new/lib/libcallmon_format.a" -lfmt -o "$work/gen_trace"
"$work/gen_trace" "$work/synth64" 2000000 20 64 > /dev/null
recs+=("$work/synth64")
"$work/gen_trace" "$work/synth_cost" 2000000 20 1 > /dev/null
for meta in "$work"/synth_cost/*.meta; do
  printf 'overhead 7.3 13.9\noverhead-overlap 1.5 2.25\n' >> "$meta"
done
recs+=("$work/synth_cost")
for prog in exceptions.cpp longjmp.c fork.c; do
  name=${prog%.*}
  case $prog in
    *.cpp) cc=g++ ;;
    *) cc=gcc ;;
  esac
  $cc -O1 -g -finstrument-functions -I"$root/tests/programs" "$root/tests/programs/$prog" \
      -o "$work/$name"
  (cd "$work" && "$new/bin/callmon" record -o "$work/rec_$name" -- "./$name" > "$work/$name.log" 2>&1) ||
      true  # a program's own exit status is not ours
  recs+=("$work/rec_$name")
done

failed=0
for rec in "${recs[@]}"; do
  for prefetch in 0 999999999999; do
    for format in text json; do
      for b in old new; do
        dir=$old
        [ $b = new ] && dir=$new
        CALLMON_PREFETCH_MIN_BYTES=$prefetch "$dir/bin/callmon" report -d "$rec" --no-pager \
            --format=$format > "$work/out.$b" 2>&1 || true
      done
      if cmp -s "$work/out.old" "$work/out.new"; then
        echo "same       $(basename "$rec") $format prefetch-min=$prefetch ($(wc -c < "$work/out.new") bytes)"
      else
        echo "DIFFERENT  $(basename "$rec") $format prefetch-min=$prefetch"
        diff "$work/out.old" "$work/out.new" | head -10
        failed=1
      fi
    done
  done
done
exit $failed
