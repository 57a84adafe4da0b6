#!/usr/bin/env python3
"""Library-call overhead (docs/patching.md, "Library calls"): ns per recorded call into
libc, callmon against uftrace's libcall, in one run.

Builds bench/libcall.c (-O2 -fno-builtin) with -pg -mfentry (both tools) and with
-finstrument-functions (callmon), and plainly; runs N calls of labs() through the PLT: plain,
under `callmon record` with and without --no-libcall, under `uftrace record` with and
without --no-libcall, each --runs times (median wall time). The cost per library call is
(recorded - the same tool with its library calls off) / N; the program's own calls are a
handful. Also prints what one clock read costs here (rdtsc, clock_gettime), since each
probe reads the clock twice. Run by hand, not in CI:

    python3 bench/run_libcall.py [--n 2000000] [--runs 5] [--callmon build/bin/callmon]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd, runs, cwd, clock="wall"):
    """Median wall time of `runs` runs, or with clock="cpu" the user + system time of the
    process and the children it waited for (steadier on a loaded machine)."""
    times = []
    for _ in range(runs):
        for d in ("rec", "uftrace.data"):
            shutil.rmtree(os.path.join(cwd, d), ignore_errors=True)
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            raise subprocess.CalledProcessError(os.waitstatus_to_exitcode(status), cmd)
        times.append(usage.ru_utime + usage.ru_stime if clock == "cpu" else elapsed)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--callmon", default=os.path.join(ROOT, "build", "bin", "callmon"))
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="wall time, or CPU time (user + system; steadier on a loaded machine)")
    a = ap.parse_args()
    w = tempfile.mkdtemp(prefix="callmon-libcall-bench.")
    src = os.path.join(ROOT, "bench", "libcall.c")
    builds = {"plain": [], "fentry": ["-pg", "-mfentry"], "cyg": ["-finstrument-functions"]}
    for name, flags in builds.items():
        subprocess.run([a.cc, "-O2", "-g", "-fno-builtin"] + flags + [src, "-o",
                        os.path.join(w, name)], check=True)
    n = str(a.n)
    clock = subprocess.run([os.path.join(w, "plain"), n, "clock"], capture_output=True,
                           text=True).stdout.strip()
    rows = [("plain", "plain", ["./plain", n])]
    for b in ("fentry", "cyg"):
        rows.append((f"callmon {b}", b, [a.callmon, "record", "-o", "rec", "--", f"./{b}", n]))
        rows.append((f"callmon {b} --no-libcall", b,
                     [a.callmon, "record", "--no-libcall", "-o", "rec", "--", f"./{b}", n]))
    have_uftrace = shutil.which("uftrace") is not None
    if have_uftrace:
        rows.append(("uftrace fentry", "fentry", ["uftrace", "record", "./fentry", n]))
        rows.append(("uftrace fentry --no-libcall", "fentry",
                     ["uftrace", "record", "--no-libcall", "./fentry", n]))
    t = {}
    for label, _, cmd in rows:
        t[label] = timed(cmd, a.runs, w, a.clock)
    print(f"{a.n} calls of labs() through the PLT, median {a.clock} time of {a.runs} runs, {a.cc}")
    print(f"clock read here: {clock}")
    print(f"{'run':32} {'time':>10} {'ns per library call':>20}")
    for label, _, _ in rows:
        per = ""
        if label.endswith("--no-libcall") or label == "plain":
            per = "(base)"
        elif label + " --no-libcall" in t:
            per = f"{(t[label] - t[label + ' --no-libcall']) * 1e9 / a.n:.1f}"
        print(f"{label:32} {t[label] * 1e3:8.1f}ms {per:>20}")
    if not have_uftrace:
        print("uftrace not installed: no uftrace rows")
    shutil.rmtree(w, ignore_errors=True)


if __name__ == "__main__":
    main()
