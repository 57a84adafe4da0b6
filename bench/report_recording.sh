#!/bin/bash
# `callmon report` (or another analysis command) on one existing recording, two builds
# interleaved: wall clock, user and system CPU of each run (/usr/bin/time), their medians,
# M calls/s from the wall clock's median, the load average before and after, and a byte
# comparison of the two builds' outputs. For the SQLite recording of issue 24 (one thread of
# 110.9 M calls, where the decoder runs ahead of the walk on the second core):
#
#   bench/report_recording.sh /work/realprog/shared/sqlite-fi NEW_BUILD [OLD_BUILD] [ROUNDS]
#
# ROUNDS (default 5) runs of each build, alternating OLD, NEW, OLD, NEW, ... so that both
# see the same load. CMD (environment, default "report") is the command run, its output
# sent to a file: `CMD=graph` times and compares `callmon graph` the same way. The call
# count comes from one `report --format=json` run of the first build.
set -euo pipefail
rec=${1:?usage: report_recording.sh RECORDING NEW_BUILD [OLD_BUILD] [ROUNDS]}
new=${2:?usage: report_recording.sh RECORDING NEW_BUILD [OLD_BUILD] [ROUNDS]}
old=${3:-}
rounds=${4:-5}
cmd=${CMD:-report}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
builds=("$new")
[ -n "$old" ] && builds=("$old" "$new")
for b in "${builds[@]}"; do
  [ -x "$b/bin/callmon" ] || { echo "no $b/bin/callmon: build callmon first" >&2; exit 1; }
done
work=$(mktemp -d /tmp/callmon-report-recording.XXXXXX)
trap 'rm -rf "$work"' EXIT

calls=$("${builds[0]}/bin/callmon" report --format=json --no-pager -d "$rec" |
        python3 -c 'import json,sys; print(sum(f["calls"] for f in json.load(sys.stdin)["functions"]))')
echo "recording $rec: $calls calls; command: callmon $cmd; $rounds rounds"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-5s %8s %8s %8s\n' round build wall_s user_s sys_s
for ((r = 1; r <= rounds; r++)); do
  for i in "${!builds[@]}"; do
    b=${builds[$i]}
    name=new
    [ ${#builds[@]} -eq 2 ] && [ "$i" -eq 0 ] && name=old
    /usr/bin/time -f '%e %U %S' -o "$work/time" "$b/bin/callmon" "$cmd" --no-pager -d "$rec" \
        > "$work/out.$name" 2> "$work/err.$name"
    read -r wall user sys < "$work/time"
    echo "$wall $user $sys" >> "$work/times.$name"
    printf '%-6s %-5s %8s %8s %8s\n' "$r" "$name" "$wall" "$user" "$sys"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-5s %12s %12s %12s %12s\n' build wall_s user_s sys_s Mcalls/s
for name in old new; do
  [ -f "$work/times.$name" ] || continue
  wall=$(cut -d' ' -f1 "$work/times.$name" | median)
  user=$(cut -d' ' -f2 "$work/times.$name" | median)
  sys=$(cut -d' ' -f3 "$work/times.$name" | median)
  awk -v n="$name" -v w="$wall" -v u="$user" -v s="$sys" -v c="$calls" \
      'BEGIN {printf "%-5s %12.2f %12.2f %12.2f %12.1f\n", n, w, u, s, c / w / 1e6}'
done
echo "(medians of $rounds runs; M calls/s from the wall clock's median)"
if [ -n "$old" ]; then
  if cmp -s "$work/out.old" "$work/out.new" && cmp -s "$work/err.old" "$work/err.new"; then
    echo "outputs: identical ($(wc -c < "$work/out.new") bytes)"
  else
    echo "outputs: DIFFERENT"
    diff "$work/out.old" "$work/out.new" | head -10
    exit 1
  fi
fi
