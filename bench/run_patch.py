#!/usr/bin/env python3
"""Entry patching's cost (`callmon record --patch=.`, docs/patching.md) side by side, in one
run, with callmon's own -pg -mfentry mode and uftrace's dynamic patching (`uftrace record
-P .`) on the same unmodified binary, plus uftrace's -pg mode and the cost of one clock
read on this machine.

Builds bench/fib.c (-O2 -fno-inline -fno-optimize-sibling-calls, as bench/run_fib.py) with
no instrumentation flag and with -pg -mfentry (and -pg for uftrace's row); runs each case
--runs times, interleaved (a, b, c, a, b, c, ...) so a change in the machine's load hits
them alike, and prints the median time and the ns each call adds over the plain binary's
median: (recorded - plain) / calls, fib(--n) and fib(20) to take start-up out. The goal of
issue 23: patched within 1.5x of the -pg -mfentry mode. Run by hand, not in CI:

    cmake --build build && python3 bench/run_patch.py [--n 28] [--runs 5] [--clock wall|cpu] [--callmon build/bin/callmon]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = ["-O2", "-fno-inline", "-fno-optimize-sibling-calls", "-g"]
SMALL_N = 20

CLOCK_C = r"""
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(void) {
  enum { N = 2000000 };
  unsigned long long s = 0;
  double a = now();
  for (int i = 0; i < N; ++i) s += __rdtsc();
  double b = now();
  struct timespec t;
  for (int i = 0; i < N; ++i) { clock_gettime(CLOCK_MONOTONIC, &t); s += t.tv_nsec; }
  double c = now();
  printf("%.1f %.1f %llu\n", (b - a) / N, (c - b) / N, s & 1);
  return 0;
}
"""


def fib_calls(n):
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1


def run_once(cmd, cwd, before, clock):
    """Seconds of one run: wall time, or with clock="cpu" the user + system time of the
    process and the children it waited for (steadier on a loaded machine)."""
    if before:
        before()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise subprocess.CalledProcessError(os.waitstatus_to_exitcode(status), cmd)
    return usage.ru_utime + usage.ru_stime if clock == "cpu" else elapsed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=28)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--callmon", default=os.path.join(ROOT, "build", "bin", "callmon"))
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="wall time, or the CPU time of the run (user + system, children included)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="callmon-patch-bench-")
    src = os.path.join(ROOT, "bench", "fib.c")
    plain, fentry, pg = (os.path.join(work, n) for n in ("fib", "fib-fentry", "fib-pg"))
    subprocess.run([args.cc] + FLAGS + [src, "-o", plain], check=True)
    subprocess.run([args.cc] + FLAGS + ["-pg", "-mfentry", src, "-o", fentry], check=True)
    subprocess.run([args.cc] + FLAGS + ["-pg", src, "-o", pg], check=True)
    clock_bin = os.path.join(work, "clock")
    with open(clock_bin + ".c", "w") as f:
        f.write(CLOCK_C)
    subprocess.run([args.cc, "-O2", clock_bin + ".c", "-o", clock_bin], check=True)
    rdtsc_ns, gettime_ns, _ = subprocess.run([clock_bin], capture_output=True, text=True,
                                             check=True).stdout.split()

    cdata, udata = os.path.join(work, "callmon.data"), os.path.join(work, "uftrace.data")
    clean = lambda: (shutil.rmtree(cdata, ignore_errors=True), shutil.rmtree(cdata + ".old", ignore_errors=True),
                     shutil.rmtree(udata, ignore_errors=True))
    record = [args.callmon, "record", "--no-scheduler", "-o", cdata]
    cases = [("plain binary, no tool", [plain]),
             ("callmon record --patch=. (unmodified binary)", record + ["--patch=.", "--", plain]),
             ("callmon record, -pg -mfentry build", record + ["--", fentry])]
    if shutil.which("uftrace"):
        cases += [("uftrace record -P . (unmodified binary)", ["uftrace", "record", "-d", udata, "-P", ".", plain]),
                  ("uftrace record, -pg build", ["uftrace", "record", "-d", udata, pg])]
    else:
        print("uftrace not installed: its rows are left out", file=sys.stderr)
    results = {}
    for n in (args.n, SMALL_N):
        times = [[] for _ in cases]
        for _ in range(args.runs):
            for i, (_, cmd) in enumerate(cases):
                times[i].append(run_once(cmd + [str(n)], work, clean, args.clock))
        results[n] = [statistics.median(t) for t in times]
    calls = fib_calls(args.n) - fib_calls(SMALL_N)
    print(f"fib({args.n}) - fib({SMALL_N}): {calls} calls; median {args.clock} time of {args.runs} "
          f"interleaved runs; one rdtsc {rdtsc_ns} ns, one clock_gettime {gettime_ns} ns here")
    print(f"{'case':48} {'time':>9} {'ns/call':>8}")
    base = results[args.n][0] - results[SMALL_N][0]
    per_call = []
    for i, (name, _) in enumerate(cases):
        t = results[args.n][i] - results[SMALL_N][i]
        ns = (t - base) / calls * 1e9 if i else 0.0
        per_call.append(ns)
        print(f"{name:48} {results[args.n][i]:8.3f}s {ns:8.1f}")
    if per_call[2] > 0:
        print(f"patched / -pg -mfentry: {per_call[1] / per_call[2]:.2f}x (goal: within 1.5x)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
