#!/usr/bin/env python3
"""Recording overhead of callmon, side by side with the uninstrumented run and uftrace.

Builds bench/fib.c three ways (-O2 -fno-inline -fno-optimize-sibling-calls): plain, with
-finstrument-functions (for callmon) and with -pg (for uftrace); runs each the given number
of times and takes the median wall time; prints calls, times, overhead per call and trace
bytes per call. Run by hand, not in CI:

    cmake --build build && python3 bench/run_fib.py [--n 32] [--runs 5] [--callmon build/bin/callmon]
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


def fib_calls(n):
    """Calls of fib() made by fib(n): 2 * fib(n + 1) - 1."""
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1


def build(cc, out, extra):
    subprocess.run([cc] + FLAGS + extra + [os.path.join(ROOT, "bench", "fib.c"), "-o", out],
                   check=True)


def timed(cmd, runs, cwd, before=None):
    """Median wall time in seconds of `runs` runs of cmd; `before` runs before each run
    (untimed), e.g. to remove the previous recording."""
    times = []
    for _ in range(runs):
        if before:
            before()
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def disk_bytes(directory, suffix):
    """(apparent size, allocated size as du counts it) of the files ending in suffix."""
    apparent = allocated = 0
    for dirpath, _, files in os.walk(directory):
        for f in files:
            if f.endswith(suffix):
                st = os.stat(os.path.join(dirpath, f))
                apparent += st.st_size
                allocated += st.st_blocks * 512
    return apparent, allocated


def main():
    ap = argparse.ArgumentParser(description="callmon vs uftrace recording overhead on fib")
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--callmon", default=os.path.join(ROOT, "build", "bin", "callmon"))
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="callmon-bench-")
    plain, cyg, pg = (os.path.join(work, x) for x in ("fib_plain", "fib_cyg", "fib_pg"))
    build(args.cc, plain, [])
    build(args.cc, cyg, ["-finstrument-functions"])
    build(args.cc, pg, ["-pg"])
    calls = fib_calls(args.n) + 1  # + main(), which the instrumented builds record too
    n = str(args.n)
    rows = []

    t_plain = timed([plain, n], args.runs, work)
    rows.append(("plain", t_plain, None, None))
    t_hooks = timed([cyg, n], args.runs, work)
    rows.append(("-finstrument-functions, no tool", t_hooks, None, None))

    data = os.path.join(work, "callmon.data")
    if os.access(args.callmon, os.X_OK):
        t = timed([args.callmon, "record", "-o", data, "--", cyg, n], args.runs, work,
                  before=lambda: shutil.rmtree(data, ignore_errors=True))
        rows.append(("callmon record", t, (t - t_plain) * 1e9 / calls,
                     disk_bytes(data, ".events")))
    else:
        print(f"callmon not found at {args.callmon}: build it first", file=sys.stderr)

    udata = os.path.join(work, "uftrace.data")
    if shutil.which("uftrace"):
        t = timed(["uftrace", "record", "-d", udata, pg, n], args.runs, work,
                  before=lambda: shutil.rmtree(udata, ignore_errors=True))
        rows.append(("uftrace record", t, (t - t_plain) * 1e9 / calls, disk_bytes(udata, ".dat")))
    else:
        print("uftrace not installed: its row is left out", file=sys.stderr)

    print(f"fib({args.n}): {calls} calls, median of {args.runs} runs, {args.cc} {' '.join(FLAGS)}")
    print(f"{'run':34} {'time s':>9} {'ns/call over plain':>19} {'trace B/call':>13} {'(du B/call)':>12}")
    for name, t, over, size in rows:
        over_s = f"{over:19.1f}" if over is not None else f"{'':19}"
        if size:
            size_s = f"{size[0] / calls:13.2f} {size[1] / calls:12.2f}"
        else:
            size_s = f"{'':13} {'':12}"
        print(f"{name:34} {t:9.3f} {over_s} {size_s}")
    if args.keep:
        print("work directory:", work)
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
