#!/usr/bin/env python3
"""A monitor on the hot save (docs/runtime.md, "Monitor mode and the vector state"): builds
tests/programs/monitor_abi.c in one hook mode (cyg: -finstrument-functions, pg: -pg, fentry:
-pg -mfentry) with -mavx2, runs it alone and under `callmon run` with a monitor whose
callbacks clobber every register a call may clobber (monitor_abi_monitor.cpp), and checks
that the output is the same (arguments, results, vector arguments and results, values kept
in callee-saved registers across calls), the exit status 0, and that the monitor saw every
instrumented call the program counted, each ending normally. Skipped (77) without AVX2.

Exit status: 0 passed, 1 failed, 77 skipped. Python stdlib only.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
PROGRAMS = os.path.join(TESTS, "programs")
SOURCE = os.path.dirname(TESTS)
ROUNDS = 300  # each round makes 46 instrumented calls, 41 of them nested 40 deep
MODES = {"cyg": ["-finstrument-functions"], "pg": ["-pg"], "fentry": ["-pg", "-mfentry"]}


def cpu_has(flag):
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return flag in line.split(":", 1)[1].split()
    except OSError:
        pass
    return False


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--mode", required=True, choices=sorted(MODES))
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    if not cpu_has("avx2"):
        print("SKIP: no AVX2 on this processor")
        return 77
    os.makedirs(args.work, exist_ok=True)
    prog = os.path.join(args.work, "monitor_abi")
    monitor = os.path.join(args.work, "monitor_abi_monitor.so")
    flags = MODES[args.mode]
    if args.mode == "cyg" and "clang" in os.path.basename(args.cc):
        # clang's hooks would also count the intrinsics inlined into main.
        flags = ["-finstrument-functions-after-inlining"]
    builds = [
        [args.cc, "-O2", "-g", "-mavx2", *flags, "-I", PROGRAMS,
         os.path.join(PROGRAMS, "monitor_abi.c"), "-o", prog],
        [args.cxx, "-O2", "-std=c++20", "-shared", "-fPIC", "-I", os.path.join(SOURCE, "include"),
         os.path.join(HERE, "monitor_abi_monitor.cpp"), "-o", monitor],
    ]
    for cmd in builds:
        r = run(cmd)
        if r.returncode != 0:
            print(f"FAIL: {' '.join(cmd)}\n{r.stderr}")
            return 1
    alone = run([prog, str(ROUNDS)], cwd=args.work)
    monitored = run([args.callmon, "run", "--monitor", monitor, "--", prog, str(ROUNDS)],
                    cwd=args.work)
    problems = []
    if alone.returncode != 0:
        problems.append(f"alone: exit status {alone.returncode}: {alone.stderr.strip()[-400:]}")
    if monitored.returncode != 0:
        problems.append(f"monitored: exit status {monitored.returncode}: "
                        f"{monitored.stderr.strip()[-400:]}")
    if monitored.stdout != alone.stdout:
        problems.append(f"output {monitored.stdout!r}, alone {alone.stdout!r}")
    m = re.search(r"^calls (\d+)$", alone.stdout, re.M)
    calls = int(m.group(1)) if m else -1
    want = f"monitor: {calls} enters {calls} exits 0 not normal"
    if want not in monitored.stderr:
        problems.append(f"monitor saw {monitored.stderr.strip()[-300:]!r}, want {want!r}")
    print(f"{'ok  ' if not problems else 'FAIL'} {args.mode}: {calls} calls", flush=True)
    for p in problems:
        print("     " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
