#!/bin/bash
# Export speed on a real recording (issue 24: exports within 2x of `callmon report`): report,
# graph, html and every export format of one recording, for one or two builds, the builds'
# runs interleaved and each round a full pass over the commands, so that every figure has a
# `report` of the same build in the same round to be divided by (the machine is shared).
# Run by hand after building callmon:
#
#   bench/export_real_bench.sh RECORDING [BUILD_DIR] [OTHER_BUILD_DIR|-] [ROUNDS]
#
# e.g. bench/export_real_bench.sh /work/realprog/shared/sqlite-fi build /work/wt/base-s34/build 3
# Defaults: build, no other build, 3 rounds. Per command and build: the medians of wall
# clock, user and system CPU seconds, the median of the per-round ratios to report's wall
# time, and the largest peak RSS (/usr/bin/time). The exports write to /dev/null (a
# 10^8-call chrome export is ~11 GB), or with OUT=pipe to `-o -` piped into `cat >
# /dev/null` (the kernel's copy into a pipe counted, as a viewer's file would cost); html
# goes to a temporary file, deleted at the end. ONLY=NAME[,NAME...] runs only those
# commands (report always runs: the ratios need it). The load average is printed before and
# after.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rec=${1:?usage: export_real_bench.sh RECORDING [BUILD_DIR] [OTHER_BUILD_DIR|-] [ROUNDS]}
builds=("${2:-$root/build}")
[ "${3:--}" != - ] && builds+=("$3")
rounds=${4:-3}
out_mode=${OUT:-null}
for b in "${builds[@]}"; do
  [ -x "$b/bin/callmon" ] || { echo "no $b/bin/callmon: build callmon first" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
work=$(mktemp -d /tmp/callmon-export-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

names=(report graph html folded callgrind chrome speedscope perfetto)
args_of() {
  case $1 in
    report) echo "report -d $rec" ;;
    graph) echo "graph -d $rec" ;;
    html) echo "html -d $rec -o $work/out.html" ;;
    *) echo "export --format=$1 -d $rec" ;;
  esac
}
wanted() { [ "$1" = report ] || [ -z "${ONLY:-}" ] || [[ ",$ONLY," == *",$1,"* ]]; }

echo "recording $rec; builds: ${builds[*]}; $rounds rounds; exports to $out_mode;" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for name in "${names[@]}"; do
    wanted "$name" || continue
    for b in "${!builds[@]}"; do
      bin=${builds[$b]}/bin/callmon
      # shellcheck disable=SC2046
      case $name in
        report | graph | html)
          /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$bin" $(args_of "$name") > /dev/null ;;
        *)
          if [ "$out_mode" = pipe ]; then
            /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$bin" $(args_of "$name") -o - \
              2> /dev/null | cat > /dev/null
          else
            /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$bin" $(args_of "$name") \
              -o /dev/null 2> /dev/null
          fi ;;
      esac
      echo "$round $name $b $(tail -1 "$work/time")" >> "$work/runs"
      rm -f "$work/out.html"
    done
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# Each run's ratio to the report of its build and round; medians over the rounds.
awk -v nb="${#builds[@]}" '
  function median(list,   n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { wall[$1, $2, $3] = $4; user[$2, $3] = user[$2, $3] " " $5; sys[$2, $3] = sys[$2, $3] " " $6
    if ($7 > rss[$2, $3]) rss[$2, $3] = $7
    walls[$2, $3] = walls[$2, $3] " " $4; round[$1] = 1; if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 } }
  END {
    printf "%-11s %-5s %7s %7s %7s %9s %8s\n", "command", "build", "wall_s", "user_s", "sys_s", "x_report", "RSS_MB"
    for (i = 1; i <= n; i++) for (b = 0; b < nb; b++) {
      c = order[i]; ratios = ""
      for (r in round) if (((r, "report", b) in wall) && ((r, c, b) in wall)) ratios = ratios " " wall[r, c, b] / wall[r, "report", b]
      printf "%-11s %-5s %7.2f %7.2f %7.2f %9.2f %8.1f\n", c, (b == 0 ? "A" : "B"), median(walls[c, b]),
             median(user[c, b]), median(sys[c, b]), median(ratios), rss[c, b] / 1024
    }
  }' "$work/runs"
