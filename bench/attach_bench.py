#!/usr/bin/env python3
"""The cost of `callmon record -p` (docs/patching.md, "Attaching"): how long the program's
threads stay stopped at the attach (patches written) and at the detach (patches undone, files
ended), and the whole attach and detach, for a generated program of FUNCS functions called in
a loop by THREADS threads, built with nop sleds (-fpatchable-function-entry=5), with
-pg -mfentry, and with no flag at all attached with --patch=. (every function's entry patched
while the program runs: "patch" rows). Each figure is the median of --runs attach/detach pairs on one process.

uftrace cannot attach to a running process (it starts the program itself), so there is no
uftrace column: the line says so. Run by hand, never in CI:
    python3 bench/attach_bench.py --callmon build/bin/callmon --funcs 100,10000 --threads 4
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


def program(funcs, threads):
    lines = ["#include <pthread.h>", "#include <unistd.h>", "#include <stdio.h>"]
    for i in range(funcs):
        lines.append(f"__attribute__((noinline)) long f{i}(long x) {{ return x + {i}; }}")
    # The sum is stored: unused, -O1 dropped every call (the functions are pure).
    lines.append("static volatile long sink;")
    lines.append("static void* work(void* arg) { long s = 0; (void)arg; for (;;) {")
    for i in range(funcs):
        lines.append(f"  s = f{i}(s);")
    lines.append("  sink = s; usleep(1000); } return (void*)s; }")
    lines.append("int main(void) { pthread_t t;")
    lines.append(f"  for (int i = 0; i < {threads}; ++i) pthread_create(&t, 0, work, 0);")
    # pause() in a loop: a -pg program's SIGPROF, routed to main while the workers are
    # stopped by an attach, would end a single pause() and the program.
    lines.append('  puts("ready"); fflush(stdout); for (;;) pause(); return 0; }')
    return "\n".join(lines) + "\n"


STOPPED = re.compile(r"threads stopped ([0-9.]+) ms")


def one_pair(callmon, pid, out, extra=()):
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.monotonic()
    p = subprocess.Popen([callmon, "record", "-p", str(pid), "-o", out, *extra], stderr=subprocess.PIPE,
                         text=True)
    first = p.stderr.readline()
    t1 = time.monotonic()
    time.sleep(0.2)
    t2 = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, rest = p.communicate(timeout=120)
    t3 = time.monotonic()
    a, d = STOPPED.search(first), STOPPED.search(rest)
    if p.returncode != 0 or not a or not d:
        sys.exit(f"attach failed: {first}{rest}")
    return float(a.group(1)), float(d.group(1)), (t1 - t0) * 1e3, (t3 - t2) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", default="build/bin/callmon")
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--funcs", default="100,10000")
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    callmon = os.path.abspath(a.callmon)
    work = tempfile.mkdtemp(prefix="attach_bench.")
    print(f"{'build':8} {'funcs':>6} {'threads':>7}   {'attach: stopped / total ms':>27}"
          f"   {'detach: stopped / total ms':>27}")
    try:
        for funcs in [int(x) for x in a.funcs.split(",")]:
            src = os.path.join(work, f"gen{funcs}.c")
            open(src, "w").write(program(funcs, a.threads))
            for build, flags, extra in (("sled", ["-fpatchable-function-entry=5"], []),
                                        ("fentry", ["-pg", "-mfentry"], []),
                                        ("patch", [], ["--patch=."])):
                exe = os.path.join(work, f"gen{funcs}_{build}")
                subprocess.run([a.cc, "-O1", "-pthread", *flags, "-o", exe, src], check=True)
                target = subprocess.Popen([exe], stdout=subprocess.PIPE, text=True)
                target.stdout.readline()
                try:
                    rows = [one_pair(callmon, target.pid, os.path.join(work, "rec"), extra)
                            for _ in range(a.runs)]
                finally:
                    target.kill()
                    target.wait()
                med = [statistics.median(r[i] for r in rows) for i in range(4)]
                print(f"{build:8} {funcs:>6} {a.threads + 1:>7}   {med[0]:>12.3f} / {med[2]:>10.1f}"
                      f"   {med[1]:>12.3f} / {med[3]:>10.1f}")
        print("uftrace: no attach to a running process (it records only programs it starts)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
