#!/usr/bin/env bash
# Recording cost and trace size on two real programs built from Debian's source packages:
# SQLite's shell (the amalgamation; a fixed SQL workload) and yaml-cpp's test suite. Run by
# hand, not in CI (a first run builds everything: several minutes):
#
#   bench/real_programs.sh [--callmon build/bin/callmon] [--src /work/realprog] [--runs 5]
#                          [--rows 250000] [--only sqlite|yaml] [--clock cpu|wall]
#                          [--no-uftrace]
#
# --src is a directory outside the repository where `apt-get source sqlite3 yaml-cpp` was
# run (deb-src lines needed); the builds go to SRC/bench-build. Prints, per program and hook
# mode, in one run: the plain (uninstrumented) time, the recorded time, the calls, the added
# ns per call, the cost of one clock read measured in the same run (bench/clock_read.c),
# and the bytes per call of the trace; uftrace's the same (on the -pg build) when it is
# installed (and not --no-uftrace); with clang, SQLite's clang builds with -finstrument-functions
# and with XRay sleds too. Times are medians of --runs runs, CPU time by default.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CALLMON=$ROOT/build/bin/callmon
SRC=/work/realprog
RUNS=5
ROWS=250000
ONLY=all
CLOCK=cpu
UFTRACE=1
while [ $# -gt 0 ]; do
  case $1 in
    --callmon) CALLMON=$(realpath "$2"); shift 2 ;;
    --src) SRC=$(realpath "$2"); shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --rows) ROWS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --clock) CLOCK=$2; shift 2 ;;
    --no-uftrace) UFTRACE=0; shift ;;
    *) echo "usage: $0 [--callmon PATH] [--src DIR] [--runs N] [--rows N] [--only sqlite|yaml]" \
            "[--clock cpu|wall] [--no-uftrace]" >&2
       exit 2 ;;
  esac
done
[ -x "$CALLMON" ] || { echo "no callmon at $CALLMON" >&2; exit 2; }
OUT=$SRC/bench-build
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/callmon-realprog.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# Median time in seconds of RUNS runs of "$@" (stdin from $STDIN, stdout discarded): CPU
# time (user + system of the process and the children it waited for, as run_fib.py
# --clock=cpu: steadier than wall time on a loaded machine), or wall time with --clock wall.
# $BEFORE (a command) runs untimed before each run.
median_time() {
  local times=()
  for _ in $(seq "$RUNS"); do
    ${BEFORE:-true}
    times+=("$(python3 -c '
import os, subprocess, sys, time
clock, stdin = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[3:], stdin=open(stdin), stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
print(ru.ru_utime + ru.ru_stime if clock == "cpu" else time.perf_counter() - t0)' \
      "$CLOCK" "${STDIN:-/dev/null}" "$@")")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

# Calls and record bytes of the callmon recording in $1 (from `callmon info --format json`;
# a build without the bytes census: the threads' event bytes).
callmon_figures() {
  "$CALLMON" info -d "$1" --format json --no-pager | python3 -c '
import json, sys
j = json.load(sys.stdin)
calls = j["calls"]
rb = j.get("record_bytes")
b = rb["bytes"] if rb else sum(t["event_bytes"] for p in j["processes"] for t in p["threads"])
print(calls, b)'
}

gcc -O2 -o "$WORK/clock_read" "$ROOT/bench/clock_read.c"
CLOCK_NS=$("$WORK/clock_read")

row() {  # program mode plain recorded calls bytes
  python3 -c '
import sys
prog, mode, plain, rec, calls, nbytes, clock = sys.argv[1:]
plain, rec, calls, nbytes, clock = float(plain), float(rec), int(calls), int(nbytes), float(clock)
added = (rec - plain) / calls * 1e9 if calls else 0
print(f"| {prog} | {mode} | {plain:.3f} s | {rec:.3f} s | {calls/1e6:.1f} M | {added:.1f} | "
      f"{clock:.1f} | {added / clock:.2f} | {nbytes / calls:.2f} |")' "$@" "$CLOCK_NS"
}

echo "callmon: $CALLMON ($("$CALLMON" --version)), runs: $RUNS, $CLOCK time, clock read: $CLOCK_NS ns"
echo
echo "| program | tool, mode | plain | recorded | calls | added ns/call | clock read ns | added / clock read | bytes/call |"
echo "|---|---|---|---|---|---|---|---|---|"

# Records "$@" with callmon $RUNS times; prints a table row.
bench_callmon() {
  local prog=$1 mode=$2 plain=$3; shift 3
  local data=$WORK/cm.data
  rec=$(BEFORE="rm -rf $data" median_time "$CALLMON" record -o "$data" -- "$@")
  read -r calls nbytes < <(callmon_figures "$data")
  row "$prog" "callmon $mode" "$plain" "$rec" "$calls" "$nbytes"
  rm -rf "$data"
}

# Records "$@" (a -pg build) with uftrace; prints a table row. The calls are callmon's
# count for the same program and workload ($1 of the caller).
bench_uftrace() {
  local prog=$1 plain=$2 calls=$3; shift 3
  [ "$UFTRACE" = 1 ] && command -v uftrace > /dev/null || return 0
  local data=$WORK/uf.data
  local rec
  rec=$(BEFORE="rm -rf $data" median_time uftrace record -d "$data" "$@")
  local nbytes
  nbytes=$(du -bc "$data"/*.dat | tail -1 | cut -f1)
  row "$prog" "uftrace -pg" "$plain" "$rec" "$calls" "$nbytes"
  rm -rf "$data"
}

if [ "$ONLY" = all ] || [ "$ONLY" = sqlite ]; then
  SQ=$(ls -d "$SRC"/sqlite3-*/ | head -1)
  B=$OUT/sqlite
  mkdir -p "$B"
  if [ ! -f "$B/sqlite3.c" ]; then
    # The amalgamation (sqlite3.c, shell.c) is generated from the source tree (needs tclsh).
    (mkdir -p "$B/amalg" && cd "$B/amalg" && "$SQ/configure" --quiet > /dev/null &&
     make -s sqlite3.c shell.c > /dev/null && cp sqlite3.c sqlite3.h shell.c "$B/")
  fi
  build_sqlite() {  # name flags...
    local name=$1; shift
    [ -x "$B/$name" ] || gcc -O2 -g "$@" "$B/sqlite3.c" "$B/shell.c" -ldl -lpthread -lm -o "$B/$name"
  }
  build_sqlite sqlite3-plain
  build_sqlite sqlite3-fi -finstrument-functions
  build_sqlite sqlite3-fentry -pg -mfentry
  build_sqlite sqlite3-pg -pg
  build_sqlite sqlite3-patchable -fpatchable-function-entry=5
  cat > "$WORK/workload.sql" <<SQL
CREATE TABLE t(a INTEGER PRIMARY KEY, b INTEGER, c TEXT);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < $ROWS)
INSERT INTO t SELECT x, (x * 7919) % 100003, printf('row-%d-%x', x, x * 31) FROM n;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(b), max(length(c)) FROM t;
SELECT b % 100 AS k, count(*), avg(a) FROM t GROUP BY k ORDER BY k LIMIT 3;
SELECT count(*) FROM t AS x JOIN t AS y ON x.b = y.a WHERE x.a < $ROWS / 2;
UPDATE t SET c = upper(c) WHERE a % 3 = 0;
DELETE FROM t WHERE a % 5 = 0;
SELECT count(*) FROM t WHERE c LIKE '%ROW-1%';
SELECT c FROM t ORDER BY c DESC LIMIT 2;
SQL
  export STDIN=$WORK/workload.sql
  plain=$(median_time "$B/sqlite3-plain" :memory:)
  bench_callmon "SQLite shell, $ROWS rows" "-finstrument-functions" "$plain" "$B/sqlite3-fi" :memory:
  sq_calls=$calls
  bench_callmon "SQLite shell, $ROWS rows" "-pg -mfentry" "$plain" "$B/sqlite3-fentry" :memory:
  bench_callmon "SQLite shell, $ROWS rows" "-pg (mcount)" "$plain" "$B/sqlite3-pg" :memory:
  bench_callmon "SQLite shell, $ROWS rows" "nop sleds (-fpatchable-function-entry=5)" "$plain" \
    "$B/sqlite3-patchable" :memory:
  bench_uftrace "SQLite shell, $ROWS rows" "$plain" "$calls" "$B/sqlite3-fentry" :memory:
  if command -v clang > /dev/null; then
    # clang's builds: XRay sleds (docs/modes.md) against -finstrument-functions, one compiler.
    build_sqlite_clang() {  # name flags...
      local name=$1; shift
      [ -x "$B/$name" ] ||
        clang -O2 -g "$@" "$B/sqlite3.c" "$B/shell.c" -ldl -lpthread -lm -o "$B/$name"
    }
    build_sqlite_clang sqlite3-clang-plain
    build_sqlite_clang sqlite3-clang-fi -finstrument-functions
    build_sqlite_clang sqlite3-clang-xray -fxray-instrument -fxray-instruction-threshold=1
    plain=$(median_time "$B/sqlite3-clang-plain" :memory:)
    bench_callmon "SQLite shell, $ROWS rows" "clang -finstrument-functions" "$plain" \
      "$B/sqlite3-clang-fi" :memory:
    bench_callmon "SQLite shell, $ROWS rows" "clang -fxray-instrument" "$plain" \
      "$B/sqlite3-clang-xray" :memory:
  fi
  unset STDIN
fi

if [ "$ONLY" = all ] || [ "$ONLY" = yaml ]; then
  YS=$(ls -d "$SRC"/yaml-cpp-*/ | head -1)
  build_yaml() {  # name flags
    local dir=$OUT/yaml-$1
    [ -x "$dir/test/yaml-cpp-tests" ] && return 0
    cmake -S "$YS" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DYAML_CPP_BUILD_TESTS=ON \
      -DYAML_CPP_BUILD_TOOLS=OFF -DCMAKE_CXX_FLAGS="$2" > /dev/null
    cmake --build "$dir" -j2 > /dev/null
  }
  build_yaml plain ""
  build_yaml fi "-finstrument-functions"
  build_yaml pg "-pg"
  YT=test/yaml-cpp-tests
  plain=$(cd "$OUT/yaml-plain" && median_time "./$YT")
  (cd "$OUT/yaml-fi" && bench_callmon "yaml-cpp tests" "-finstrument-functions" "$plain" "./$YT")
  (cd "$OUT/yaml-pg" && bench_callmon "yaml-cpp tests" "-pg (mcount)" "$plain" "./$YT")
  if [ "$UFTRACE" = 1 ] && command -v uftrace > /dev/null; then
    (cd "$OUT/yaml-pg" && bench_uftrace "yaml-cpp tests" "$plain" "$(
       "$CALLMON" record -o "$WORK/c.data" -- "$OUT/yaml-fi/$YT" > /dev/null 2>&1;
       callmon_figures "$WORK/c.data" | cut -d' ' -f1)" "./$YT")
  fi
fi
