#!/usr/bin/env bash
# Builds callmon with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ (every
# layer but the runtime library and the example program, see CALLMON_SANITIZE in the top
# CMakeLists.txt) and runs the whole test suite under them: unit, golden, fuzz replay and
# end-to-end tests, plus the ThreadSanitizer test of the runtime's thread code when clang's
# TSan runtime is installed. UBSan is fatal: any finding fails its test. docs/reliability.md.
#
# Usage: scripts/test-sanitizers.sh [extra ctest arguments, e.g. -L unit]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${CALLMON_SANITIZE_BUILD:-build-asan}
cmake -S . -B "$BUILD" -DCALLMON_SANITIZE=address,undefined > /dev/null
cmake --build "$BUILD" -j2
# detect_leaks: leaks fail the tests too. halt_on_error/abort: the first report ends the
# process with an error status. The e2e fixture programs are not instrumented, so these
# options (inherited through `callmon record`) do not concern them.
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Source lines in the reports (llvm-14 installs the symbolizer outside PATH).
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
ctest --test-dir "$BUILD" --output-on-failure -j2 "$@"
echo "sanitizers: all tests passed under ASan + UBSan"
