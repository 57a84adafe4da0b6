#!/usr/bin/env python3
"""Where a recorded call's cost goes: fib (bench/fib.c) under stub hooks that each add one
part of callmon's work, then under callmon, all in one run (issue 24, docs/runtime.md
"Where a call's cost goes").

-finstrument-functions (bench/hot_path_cyg_stubs.c): empty hooks; + one clock read per hook;
+ shadow stack and 8-byte record stores into memory already there; callmon; callmon less the
time its recorder spent growing the trace file (`paused_ns` in `callmon info --format=json`).
-pg -mfentry (bench/hot_path_fentry_stubs.S): an empty __fentry__; + the return hijack;
+ one clock read at entry and exit; callmon; callmon less its recorder's time. Also the cost
of one clock read alone (bench/clock_read.c), measured in the same run.

Figures are CPU time (user + system), the median of --runs runs interleaved round by round,
per call "marginal": (time at N - time at 20) / (calls at N - calls at 20), so start-up
costs (the runtime's calibration, mapping the stubs' memory) drop out. Run by hand:

    cmake --build build && python3 bench/hot_path_breakdown.py [--n 32] [--runs 7] [--callmon build/bin/callmon]
        [--base OTHER/build/bin/callmon]
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = ["-O2", "-fno-inline", "-fno-optimize-sibling-calls"]
SMALL_N = 20


def fib_calls(n):
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1


def run(cmd, work, env=None):
    """CPU seconds of cmd (user + system of the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--callmon", default=os.path.join(ROOT, "build", "bin", "callmon"))
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--base", metavar="CALLMON",
                    help="another build's callmon, recorded with in the same run (its own "
                         "rows, interleaved with the others): before and after a change")
    args = ap.parse_args()
    callmon = os.path.abspath(args.callmon)
    if not os.access(callmon, os.X_OK):
        raise SystemExit(f"no {callmon}: build callmon first")
    work = tempfile.mkdtemp(prefix="callmon-hot-path.")
    try:
        measure(args, callmon, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args, callmon, work):
    cc = args.cc
    fib = os.path.join(ROOT, "bench", "fib.c")
    sh = lambda *c: subprocess.run(list(c), check=True, cwd=work)
    sh(cc, "-O2", os.path.join(ROOT, "bench", "clock_read.c"), "-o", "clock_read")
    sh(cc, *FLAGS, fib, "-o", "plain")
    sh(cc, *FLAGS, "-finstrument-functions", fib, "-o", "cyg")
    # Linked without -pg: no gprof start-up or SIGPROF timer, only the __fentry__ calls.
    sh(cc, *FLAGS, "-pg", "-mfentry", "-c", fib, "-o", "fentry.o")
    sh(cc, "fentry.o", "-o", "fentry")
    for stage in range(3):
        sh(cc, "-O2", "-shared", "-fPIC", f"-DSTAGE={stage}",
           os.path.join(ROOT, "bench", "hot_path_cyg_stubs.c"), "-o", f"cyg{stage}.so")
        sh(cc, "-shared", "-fPIC", f"-DSTAGE={stage}",
           os.path.join(ROOT, "bench", "hot_path_fentry_stubs.S"), "-o", f"fentry{stage}.so")

    def stub(prog, lib):
        env = dict(os.environ, LD_PRELOAD=os.path.join(work, lib))
        return lambda n: (run([f"./{prog}", str(n)], work, env), 0.0)

    def recorded(prog, callmon=callmon):
        def go(n):
            rec = os.path.join(work, "rec")
            shutil.rmtree(rec, ignore_errors=True)
            t = run([callmon, "record", "-o", rec, "--", f"./{prog}", str(n)], work)
            info = json.loads(subprocess.run([callmon, "info", "-d", rec, "--format=json"],
                                             check=True, capture_output=True, text=True).stdout)
            held = sum(th.get("paused_ns", 0) for p in info["processes"] for th in p["threads"])
            return t, held / 1e9
        return go

    rows = [
        ("plain", lambda n: (run(["./plain", str(n)], work), 0.0)),
        ("cyg: empty hooks", stub("cyg", "cyg0.so")),
        ("cyg: + clock read in each hook", stub("cyg", "cyg1.so")),
        ("cyg: + shadow stack, records in memory", stub("cyg", "cyg2.so")),
        ("cyg: callmon record", recorded("cyg")),
        ("fentry: empty __fentry__", stub("fentry", "fentry0.so")),
        ("fentry: + return hijack", stub("fentry", "fentry1.so")),
        ("fentry: + clock read at entry and exit", stub("fentry", "fentry2.so")),
        ("fentry: callmon record", recorded("fentry")),
    ]
    if args.base:
        base_callmon = os.path.abspath(args.base)
        rows += [("cyg: callmon record, --base build", recorded("cyg", base_callmon)),
                 ("fentry: callmon record, --base build", recorded("fentry", base_callmon))]
    times = {name: {args.n: [], SMALL_N: []} for name, _ in rows}
    held = {name: [] for name, _ in rows}
    clock = []
    for _ in range(args.runs):
        out = subprocess.run(["./clock_read"], cwd=work, check=True, capture_output=True, text=True)
        clock.append(float(out.stdout.split()[0]))
        for name, fn in rows:
            for n in (args.n, SMALL_N):
                t, h = fn(n)
                times[name][n].append(t)
                if n == args.n:
                    held[name].append(h)
    calls = fib_calls(args.n) - fib_calls(SMALL_N)
    per_call = {name: (statistics.median(times[name][args.n]) - statistics.median(times[name][SMALL_N]))
                * 1e9 / calls for name, _ in rows}
    read = statistics.median(clock)
    print(f"fib({args.n}), {cc} {' '.join(FLAGS)}; CPU time, median of {args.runs} interleaved runs, "
          f"marginal ns per call over fib({SMALL_N})")
    print(f"one clock read (rdtsc): {read:.1f} ns; the floor of two per call: {2 * read:.1f} ns")
    print(f"{'build':44s} {'ns/call':>8s} {'added':>8s} {'step':>8s}")
    base = per_call["plain"]
    prev = base
    for name, _ in rows:
        v = per_call[name]
        step = "" if name == "plain" or name.endswith("empty hooks") or name.endswith("__fentry__") \
            else f"{v - prev:+8.1f}"
        if name.endswith("empty hooks") or name.endswith("__fentry__"):
            step = f"{v - base:+8.1f}"
        print(f"{name:44s} {v:8.1f} {v - base:8.1f} {step:>8s}")
        if "callmon record" in name:
            h = statistics.median(held[name]) * 1e9 / fib_calls(args.n)
            print(f"{'  of which: growing the trace file':44s} {h:8.1f}")
            print(f"{'  callmon record less that':44s} {v - h:8.1f} {v - h - base:8.1f}")
        prev = v


if __name__ == "__main__":
    main()
