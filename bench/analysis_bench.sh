#!/bin/bash
# Analysis speed of every command on one synthetic recording (bench/gen_trace.cpp): report,
# replay to a pipe, graph, html and each export, with peak RSS; one or two builds side by
# side, their runs interleaved so that both see the same load (the machine is shared).
# Run by hand after building:
#
#   bench/analysis_bench.sh [BUILD_DIR] [OTHER_BUILD_DIR|-] [CALLS] [THREADS] [RUNS]
#
# Defaults: build, no other build, 20 M calls, 1 thread (the one-big-thread case; 64 gives
# many short threads), 3 runs. Each figure is the median of the runs: wall clock and CPU
# (user + system) seconds, M calls/s from the wall clock, and the largest peak RSS. Output
# files go to a temporary directory (the exports' sizes are printed) and are deleted.
# ONLY=NAME[,NAME...] in the environment runs only those commands (e.g. ONLY=report).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
builds=("${1:-$root/build}")
[ "${2:--}" != - ] && builds+=("$2")
calls=${3:-20000000}
threads=${4:-1}
runs=${5:-3}
for b in "${builds[@]}"; do
  [ -x "$b/bin/callmon" ] || { echo "no $b/bin/callmon: build callmon first" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d /tmp/callmon-analysis-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

g++ -std=c++20 -O2 -I"$root" -I"$root/include" "$root/bench/gen_trace.cpp" \
    "${builds[0]}/lib/libcallmon_format.a" -lfmt -o "$work/gen_trace"
written=$("$work/gen_trace" "$work/rec" "$calls" 20 "$threads")
echo "recording: $written calls in $threads thread(s), $(du -sm "$work/rec" | cut -f1) MB;" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"

# The commands, as NAME|ARGS (the output goes to $work/out: by -o, or by stdout for report
# and graph; replay's to a pipe).
commands=(
  "report|report --format=json -d $work/rec"
  "replay|replay -d $work/rec"
  "graph|graph --format=json -d $work/rec"
  "html|html -d $work/rec -o $work/out"
  "folded|export --format=folded -d $work/rec -o $work/out"
  "callgrind|export --format=callgrind -d $work/rec -o $work/out"
  "chrome|export --format=chrome -d $work/rec -o $work/out"
  "speedscope|export --format=speedscope -d $work/rec -o $work/out"
  "perfetto|export --format=perfetto -d $work/rec -o $work/out"
)

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-11s %-6s %8s %8s %9s %8s %10s\n' command build wall_s cpu_s Mcalls/s RSS_MB out_MB
for entry in "${commands[@]}"; do
  name=${entry%%|*}
  args=${entry#*|}
  if [ -n "${ONLY:-}" ] && [[ ",$ONLY," != *",$name,"* ]]; then continue; fi
  for b in "${!builds[@]}"; do : > "$work/walls.$b"; : > "$work/cpus.$b"; : > "$work/rss.$b"; done
  for run in $(seq "$runs"); do
    for b in "${!builds[@]}"; do
      rm -f "$work/out"
      # shellcheck disable=SC2086
      if [ "$name" = replay ]; then
        /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" "${builds[$b]}/bin/callmon" $args | cat > /dev/null
      elif [ "$name" = graph ] || [ "$name" = report ]; then
        /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" "${builds[$b]}/bin/callmon" $args > "$work/out"
      else
        /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" "${builds[$b]}/bin/callmon" $args > /dev/null
      fi
      read -r wall user sys rss < "$work/time.txt"
      echo "$wall" >> "$work/walls.$b"
      awk -v u="$user" -v s="$sys" 'BEGIN{print u+s}' >> "$work/cpus.$b"
      echo "$rss" >> "$work/rss.$b"
      out_mb=$( [ -f "$work/out" ] && du -m "$work/out" | cut -f1 || echo -)
    done
  done
  for b in "${!builds[@]}"; do
    wall=$(median < "$work/walls.$b")
    cpu=$(median < "$work/cpus.$b")
    rss=$(sort -g "$work/rss.$b" | tail -1)
    label=$([ "$b" = 0 ] && echo A || echo B)
    awk -v n="$name" -v l="$label" -v w="$wall" -v c="$cpu" -v r="$rss" -v k="$written" \
        -v o="$out_mb" 'BEGIN{printf "%-11s %-6s %8.2f %8.2f %9.1f %8.1f %10s\n", n, l, w, c, k/w/1e6, r/1024, o}'
  done
done
echo "(A = ${builds[0]}${builds[1]:+, B = ${builds[1]}}; median of $runs runs, interleaved)"
