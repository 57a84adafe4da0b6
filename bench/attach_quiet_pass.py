#!/usr/bin/env python3
"""The pass callmon makes in an idle thread of a program that records next to nothing
(docs/patching.md, "Modules loaded while attached", "A program that records next to
nothing"): tests/attach/attach_sigmod.c, built with -pg -mfentry, waits in read(2) while
attached and loads tests/attach/attach_sigplugin.c (the same build) through a dlopen
pointer taken at its start, behind the runtime's wrappers. Per run (a fresh process each):
how long callmon kept the thread it called into stopped for the pass ("thread stopped"),
from the load's answer to callmon's line about the pass (the delay the program's first
calls into the module go unrecorded: the map look every 20 ms, then 100 ms without an
answer), and, for scale, the attach's own stop in the same run. Medians of --runs, with
the load average. Run by hand, never in CI:
    python3 bench/attach_quiet_pass.py --callmon build/bin/callmon --runs 9
"""
import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "tests", "attach")
STOPPED = re.compile(r"threads? stopped ([0-9.]+) ms")


def one_run(callmon, exe, plugin, out):
    shutil.rmtree(out, ignore_errors=True)
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         bufsize=1)
    p.stdout.readline()
    log = out + ".stderr"
    with open(log, "w") as f:
        cm = subprocess.Popen([callmon, "record", "-p", str(p.pid), "-o", out], stderr=f)
        while "\n" not in open(log).read():
            time.sleep(0.005)
        attach = float(STOPPED.search(open(log).read()).group(1))
        p.stdin.write(f"L {plugin}\n")
        p.stdin.flush()
        p.stdout.readline()
        t0 = time.monotonic()
        line = None
        while time.monotonic() - t0 < 10:
            line = next((l for l in open(log) if "made in an idle thread (the" in l), None)
            if line:
                break
            time.sleep(0.002)
        delay = (time.monotonic() - t0) * 1000
        cm.send_signal(signal.SIGINT)
        cm.wait(timeout=60)
    p.stdin.write("Q\n")
    p.stdin.flush()
    p.wait(timeout=30)
    if not line:
        sys.exit(f"no pass made in an idle thread: {open(log).read()}")
    return float(STOPPED.search(line).group(1)), delay, attach


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--runs", type=int, default=9)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="callmon-quiet-pass-")
    try:
        flags = ["-O2", "-g", "-pg", "-mfentry"]
        exe = os.path.join(work, "quiet")
        plugin = os.path.join(work, "plugin.so")
        subprocess.run([a.cc, *flags, "-o", exe, os.path.join(TESTS, "attach_sigmod.c")],
                       check=True)
        subprocess.run([a.cc, *flags, "-fPIC", "-shared", "-o", plugin,
                        os.path.join(TESTS, "attach_sigplugin.c")], check=True)
        rows = [one_run(a.callmon, exe, plugin, os.path.join(work, f"rec{i}"))
                for i in range(a.runs)]
        load = os.getloadavg()
        med = [statistics.median(r[i] for r in rows) for i in range(3)]
        lo = [min(r[i] for r in rows) for i in range(3)]
        hi = [max(r[i] for r in rows) for i in range(3)]
        print(f"{a.runs} runs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
        print(f"pass in an idle thread: thread stopped {med[0]:.2f} ms median "
              f"({lo[0]:.2f}-{hi[0]:.2f})")
        print(f"from the load to callmon's line: {med[1]:.0f} ms median ({lo[1]:.0f}-{hi[1]:.0f})")
        print(f"the attach's stop, for scale: {med[2]:.2f} ms median ({lo[2]:.2f}-{hi[2]:.2f})")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
