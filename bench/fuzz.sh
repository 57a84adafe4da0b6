#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (ASan + UBSan + libFuzzer coverage) in
# build-fuzz/ and runs each for SECONDS seconds (default 60) from a copy of its committed
# seed corpus. Prints each target's executions and crashes; crash inputs are left in
# build-fuzz/fuzz-out/<target>/ (crash-*, leak-*, timeout-*). See docs/reliability.md.
#
# Usage: bench/fuzz.sh [SECONDS] [TARGET...]      (targets: thread_file process_meta
#        recording symbolizer session sched; default all)
#        bench/fuzz.sh --seeds                    regenerate the seed corpora
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${CALLMON_FUZZ_BUILD:-build-fuzz}
ALL="thread_file process_meta recording symbolizer session sched"

cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCALLMON_FUZZ=ON -DCALLMON_TESTS=OFF -DCALLMON_SANITIZE=address,undefined > /dev/null
targets=""
for t in $ALL; do targets="$targets fuzz_$t"; done
cmake --build "$BUILD" -j2 --target $targets fuzz_make_seeds > /dev/null

if [ "${1:-}" = "--seeds" ]; then
  "$BUILD/bin/fuzz_make_seeds" fuzz/corpus
  # ELF seeds: a small object with DWARF, the same linked, and that binary stripped.
  tmp=$(mktemp -d)
  printf 'static int leaf(int x) { return x * 3; }\nint f(int x) { return leaf(x) + 1; }\n'\
'int main(int c, char** v) { (void)v; return f(c); }\n' > "$tmp/t.c"
  clang -O1 -g -c -o fuzz/corpus/symbolizer/object.o "$tmp/t.c"
  clang -O1 -g -o "$tmp/prog" "$tmp/t.c"
  cp "$tmp/prog" fuzz/corpus/symbolizer/binary_debug
  strip -o fuzz/corpus/symbolizer/binary_stripped "$tmp/prog"
  rm -rf "$tmp"
  echo "seeds written under fuzz/corpus/"
  exit 0
fi

SECONDS_EACH=${1:-60}
shift || true
[ $# -gt 0 ] && ALL="$*"
total_crashes=0
for t in $ALL; do
  out="$BUILD/fuzz-out/$t"
  mkdir -p "$out/corpus"
  cp -n fuzz/corpus/$t/* "$out/corpus/" 2>/dev/null || true
  log="$out/fuzz.log"
  # -fork with -ignore_crashes keeps going after a crash so one run finds several;
  # ASan's leak check stays on (a leak is a finding too).
  set +e
  "$BUILD/bin/fuzz_$t" -max_total_time="$SECONDS_EACH" -fork=1 -ignore_crashes=1 \
    -ignore_timeouts=1 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$out/" \
    "$out/corpus" > "$log" 2>&1
  set -e
  # Fork mode's status lines: "#EXECS: cov: ... oom/timeout/crash: O/T/C time: ...".
  last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
  execs=$(echo "$last" | sed -nE 's/^#([0-9]+):.*/\1/p')
  crashes=$(echo "$last" | sed -nE 's|.*oom/timeout/crash: [0-9]+/[0-9]+/([0-9]+).*|\1|p')
  execs=${execs:-?}
  crashes=${crashes:-?}
  artifacts=$(ls "$out" | grep -cE '^(crash|leak|timeout|oom)-' || true)
  echo "$t: $SECONDS_EACH s, $execs executions, $crashes crashes, $artifacts artifacts in $out/"
  [ "$crashes" != "?" ] && total_crashes=$((total_crashes + crashes))
done
echo "total crashes: $total_crashes"
