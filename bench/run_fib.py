#!/usr/bin/env python3
"""Recording overhead of callmon, side by side with the uninstrumented run and uftrace.

Builds bench/fib.c (-O2 -fno-inline -fno-optimize-sibling-calls) plainly and in each hook
mode asked for with --mode (cyg: -finstrument-functions, pg: -pg, fentry: -pg -mfentry,
sled-fentry: gcc -pg -mfentry -mnop-mcount -mrecord-mcount, patchable:
-fpatchable-function-entry=5, xray: clang -fxray-instrument -fxray-instruction-threshold=1,
built with clang whatever --cc says; `all` for all of them), plus -pg for uftrace; runs each the given number of times and takes
the median wall time; prints calls, times, overhead per call and trace bytes per call, the
modes side by side. The "no tool" rows run the instrumented build alone (the -pg ones with
glibc's mcount and gprof's timer; the sled ones with their nops, untouched). For the sled
modes a second table compares the unrecorded sled builds with the plain one, their runs
interleaved with the plain build's (--ratio-runs each), as the ratio of median times. Run
by hand, not in CI:

    cmake --build build && python3 bench/run_fib.py [--n 32] [--runs 5] [--mode all] [--callmon build/bin/callmon]

--also adds rows recorded with more options, in the same run as the plain callmon row (the
record-time filters' cost: --also='--exclude=^nomatch$' --also='--include=^main').

--monitor adds a row per mode run under `callmon run --monitor` with a monitor whose
callbacks do nothing (built here from include/callmon/monitor.hpp), the cost of monitor mode
per call; sleds are patched only when recording, so it means the cyg, pg and fentry modes:

    python3 bench/side_by_side.py --build new=build/bin/callmon --build old=OLD/bin/callmon \
        --rounds 5 --field 2 -- bench/run_fib.py --mode cyg,pg,fentry --monitor --runs 1
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
SMALL_N = 20  # about 22 000 calls: start-up cost dominates
FLAGS = ["-O2", "-fno-inline", "-fno-optimize-sibling-calls", "-g"]
MODES = {"cyg": ["-finstrument-functions"], "pg": ["-pg"], "fentry": ["-pg", "-mfentry"],
         "sled-fentry": ["-pg", "-mfentry", "-mnop-mcount", "-mrecord-mcount", "-fno-pie"],
         "patchable": ["-fpatchable-function-entry=5"],
         # clang only: sleds at entries and returns, patched by callmon (docs/modes.md).
         "xray": ["-fxray-instrument", "-fxray-instruction-threshold=1"]}
# Modes only one compiler has: built with it whatever --cc says (give --cc clang to compare
# the other modes with the same compiler).
MODE_CC = {"xray": "clang"}
# Link options per mode where they differ from the compile options: the sled-fentry build
# is linked without -pg (no gprof start-up, no SIGPROF timer: nothing but the nops differs
# from the plain build) and, as gcc has no -mnop-mcount for PIC, without PIE.
LINK = {"sled-fentry": ["-no-pie"]}
SLED_MODES = ("sled-fentry", "patchable", "xray")
# --monitor's monitor: every callback empty, so that its row is the runtime's cost.
EMPTY_MONITOR = r"""
#include "callmon/monitor.hpp"
struct Empty : callmon::Monitor {
  void on_enter(callmon::ThreadInfo&, const callmon::CallInfo&) noexcept override {}
  void on_exit(callmon::ThreadInfo&, const callmon::CallInfo&, callmon::ExitKind) noexcept override {}
};
CALLMON_MONITOR(Empty)
"""


def fib_calls(n):
    """Calls of fib() made by fib(n): 2 * fib(n + 1) - 1."""
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return 2 * a - 1


def build(cc, out, extra, link=None):
    """Compiles and links fib.c; with `link`, links separately with those options instead
    of `extra`."""
    src = os.path.join(ROOT, "bench", "fib.c")
    if link is None:
        subprocess.run([cc] + FLAGS + extra + [src, "-o", out], check=True)
        return
    subprocess.run([cc] + FLAGS + extra + ["-c", src, "-o", out + ".o"], check=True)
    subprocess.run([cc] + link + [out + ".o", "-o", out], check=True)


def interleaved(cmds, runs, cwd, clock):
    """Median time of each command of `cmds`, their runs interleaved (a, b, c, a, b, c, ...)
    so that a change in the machine's load hits all of them alike."""
    times = [[] for _ in cmds]
    for _ in range(runs):
        for i, cmd in enumerate(cmds):
            times[i].append(timed(cmd, 1, cwd, None, clock))
    return [statistics.median(t) for t in times]


def timed(cmd, runs, cwd, before=None, clock="wall"):
    """Median time in seconds of `runs` runs of cmd: wall time, or with clock="cpu" the user +
    system time of the process and the children it waited for (less disturbed by other load
    on the machine); `before` runs before each run (untimed), e.g. to remove the previous
    recording."""
    times = []
    for _ in range(runs):
        if before:
            before()
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, cmd)
        times.append(usage.ru_utime + usage.ru_stime if clock == "cpu" else elapsed)
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
    ap.add_argument("--mode", default="cyg",
                    help="comma-separated hook modes to record: cyg, pg, fentry, sled-fentry, "
                         "patchable, xray, or all")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="wall time, or CPU time (user + system; steadier on a loaded machine)")
    ap.add_argument("--record-arg", action="append", default=[],
                    help="extra option for callmon record (repeatable), e.g. --max-depth=1000")
    ap.add_argument("--also", action="append", default=[], metavar="OPTIONS",
                    help="one more callmon row per mode, recorded with these extra options "
                         "(space-separated; repeatable), e.g. --also='--exclude=^nomatch$'")
    ap.add_argument("--uftrace-also", action="append", default=[], metavar="OPTIONS",
                    help="one more uftrace row recorded with these extra options (space-separated;"
                         " repeatable), e.g. --uftrace-also='-A fib@arg1 -R fib@retval'")
    ap.add_argument("--ratio-runs", type=int, default=11,
                    help="interleaved runs per build for the sled modes' native-speed table")
    ap.add_argument("--monitor", action="store_true",
                    help="one more row per mode: `callmon run` with a do-nothing monitor")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    modes = list(MODES) if args.mode == "all" else args.mode.split(",")
    for m in modes:
        if m not in MODES:
            ap.error(f"unknown mode {m!r} ({', '.join(MODES)}, all)")
    args.callmon = os.path.abspath(args.callmon)

    work = tempfile.mkdtemp(prefix="callmon-bench-")
    plain, pg = (os.path.join(work, x) for x in ("fib_plain", "fib_pg"))
    build(args.cc, plain, [])
    build(args.cc, pg, ["-pg"])
    binaries = {}
    for m in modes:
        binaries[m] = os.path.join(work, "fib_" + m)
        build(MODE_CC.get(m, args.cc), binaries[m], MODES[m], LINK.get(m))
    monitor = os.path.join(work, "empty_monitor.so")
    if args.monitor:
        with open(monitor + ".cpp", "w") as f:
            f.write(EMPTY_MONITOR)
        subprocess.run(["g++", "-O2", "-std=c++20", "-shared", "-fPIC",
                        "-I", os.path.join(ROOT, "include"), monitor + ".cpp", "-o", monitor],
                       check=True)
    calls = fib_calls(args.n) + 1  # + main(), which the instrumented builds record too
    small_calls = fib_calls(SMALL_N) + 1
    rows = []

    def measure(name, cmd, data=None, suffix=None):
        """Runs cmd (a list with N last) at N and at SMALL_N. The difference between the two
        removes the fixed start-up cost and gives the cost per call."""
        clean = (lambda: shutil.rmtree(data, ignore_errors=True)) if data else None
        big = timed(cmd + [str(args.n)], args.runs, work, clean, args.clock)
        size = disk_bytes(data, suffix) if data else None
        small = timed(cmd + [str(SMALL_N)], args.runs, work, clean, args.clock)
        rows.append((name, big, small, size))

    measure("plain", [plain])
    data = os.path.join(work, "callmon.data")
    for m in modes:
        measure(f"{' '.join(MODES[m])}, no tool", [binaries[m]])
        if os.access(args.callmon, os.X_OK):
            measure(f"callmon record ({m})", [args.callmon, "record", "-o", data] +
                    args.record_arg + ["--", binaries[m]], data, ".events")
            for extra in args.also:
                measure(f"  {extra}", [args.callmon, "record", "-o", data] + args.record_arg +
                        extra.split() + ["--", binaries[m]], data, ".events")
            if args.monitor:
                measure(f"callmon run --monitor ({m})",
                        [args.callmon, "run", "--monitor", monitor, "--", binaries[m]])
        else:
            print(f"callmon not found at {args.callmon}: build it first", file=sys.stderr)
    udata = os.path.join(work, "uftrace.data")
    if shutil.which("uftrace"):
        measure("uftrace record", ["uftrace", "record", "-d", udata, pg], udata, ".dat")
        for extra in args.uftrace_also:
            measure(f"  {extra}", ["uftrace", "record", "-d", udata] + extra.split() + [pg],
                    udata, ".dat")
    else:
        print("uftrace not installed: its row is left out", file=sys.stderr)

    _, p_big, p_small, _ = rows[0]
    print(f"fib({args.n}): {calls} calls, median {args.clock} time of {args.runs} runs, "
          f"{args.cc} {' '.join(FLAGS)}")
    print("  ns/call: (time - plain time) / calls, start-up included;")
    print(f"  marginal: the same from the difference between fib({args.n}) and fib({SMALL_N}),"
          " start-up excluded")
    print(f"  start-up: time of fib({SMALL_N}) minus the plain one")
    print(f"{'run':44} {'time s':>8} {'ns/call':>8} {'marginal':>9} {'start-up ms':>12}"
          f" {'trace B/call':>13} {'du B/call':>10}")
    for name, big, small, size in rows:
        per_call = (big - p_big) * 1e9 / calls
        marginal = ((big - small) - (p_big - p_small)) * 1e9 / (calls - small_calls)
        startup = (small - p_small) * 1e3
        size_s = (f"{size[0] / calls:13.2f} {size[1] / calls:10.2f}" if size
                  else f"{'':13} {'':10}")
        if name == "plain":
            print(f"{name:44} {big:8.3f} {'':8} {'':9} {'':12} {size_s}")
        else:
            print(f"{name:44} {big:8.3f} {per_call:8.1f} {marginal:9.1f} {startup:12.1f} {size_s}")
    sleds = [m for m in modes if m in SLED_MODES]
    if sleds:
        cmds = [[plain, str(args.n)]] + [[binaries[m], str(args.n)] for m in sleds]
        medians = interleaved(cmds, args.ratio_runs, work, args.clock)
        print(f"\nunrecorded sled builds against the plain one: fib({args.n}), median {args.clock}"
              f" time of {args.ratio_runs} interleaved runs each")
        print(f"{'build':50} {'time s':>8} {'/ plain':>8}")
        for name, t in zip(["plain"] + [" ".join(MODES[m]) for m in sleds], medians):
            print(f"{name:50} {t:8.3f} {t / medians[0]:8.3f}")
    if args.keep:
        print("work directory:", work)
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
