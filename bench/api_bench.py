#!/usr/bin/env python3
"""Cost per call of the extension API: an empty monitor under `callmon run` against normal
recording (`callmon record`) and the uninstrumented build, on bench/fib.c.

Builds fib (-O2 -fno-inline -fno-optimize-sibling-calls) plainly and in each hook mode
(cyg: -finstrument-functions, fentry: -pg -mfentry), and a monitor that overrides every
callback with an empty body; runs each the given number of times and prints the median
wall time and the cost per call over the uninstrumented run. Run by hand, not in CI:

    cmake --build build && python3 bench/api_bench.py [--n 30] [--runs 5]
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
MODES = {"cyg": ["-finstrument-functions"], "fentry": ["-pg", "-mfentry"]}
EMPTY_MONITOR = r"""
#include "callmon/monitor.hpp"
struct Empty : callmon::Monitor {
  void on_enter(callmon::ThreadInfo&, const callmon::CallInfo&) noexcept override {}
  void on_exit(callmon::ThreadInfo&, const callmon::CallInfo&, callmon::ExitKind) noexcept override {}
};
CALLMON_MONITOR(Empty)
"""


def fib_calls(n):
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1 + 1  # fib() calls, and main


def timed(cmd, runs, cwd, before=None):
    times = []
    for _ in range(runs):
        if before:
            before()
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--cxx", default="g++")
    ap.add_argument("--callmon", default=os.path.join(ROOT, "build", "bin", "callmon"))
    args = ap.parse_args()
    callmon = os.path.abspath(args.callmon)
    calls = fib_calls(args.n)
    work = tempfile.mkdtemp(prefix="callmon-api-bench-")
    try:
        src = os.path.join(ROOT, "bench", "fib.c")
        subprocess.run([args.cc] + FLAGS + [src, "-o", os.path.join(work, "fib")], check=True)
        mon_src = os.path.join(work, "empty.cpp")
        open(mon_src, "w").write(EMPTY_MONITOR)
        subprocess.run([args.cxx, "-std=c++20", "-O2", "-shared", "-fPIC", "-I",
                        os.path.join(ROOT, "include"), mon_src, "-o",
                        os.path.join(work, "empty.so")], check=True)
        base = timed(["./fib", str(args.n)], args.runs, work)
        print(f"fib({args.n}): {calls} calls; median of {args.runs} runs")
        print(f"{'mode':8} {'what':22} {'time s':>8} {'ns/call over plain':>19}")
        print(f"{'-':8} {'uninstrumented':22} {base:8.3f} {0:19.1f}")
        data = os.path.join(work, "rec.data")
        for mode, flags in MODES.items():
            prog = os.path.join(work, "fib_" + mode)
            subprocess.run([args.cc] + FLAGS + flags + [src, "-o", prog], check=True)
            rows = [
                ("record", [callmon, "record", "-o", data, "--", prog, str(args.n)],
                 lambda: shutil.rmtree(data, ignore_errors=True)),
                ("run, empty monitor", [callmon, "run", "--monitor", os.path.join(work, "empty.so"),
                                        "--", prog, str(args.n)], None),
            ]
            for what, cmd, before in rows:
                t = timed(cmd, args.runs, work, before)
                print(f"{mode:8} {what:22} {t:8.3f} {(t - base) * 1e9 / calls:19.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
