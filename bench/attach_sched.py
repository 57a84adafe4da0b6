#!/usr/bin/env python3
"""Scheduler time under attach (docs/record.md, `record -p`; docs/runtime.md "Scheduler
time"): a program calling a short function (~50 ns) every ~10 us on one thread, attached for a few
seconds while two spinning processes compete for the CPUs. Prints, per callmon given,
the median over RUNS attaches of the function's max, its total against the attach's wall
time, and the preempted time taken out (report --format=json), and info's scheduler line.

  bench/attach_sched.py --callmon base=/work/wt/base/build/bin/callmon \\
                        --callmon branch=build/bin/callmon --runs 3
"""
import argparse
import json
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

SOURCE = r"""
#include <stdio.h>
#include <unistd.h>
__attribute__((noinline)) unsigned tiny(unsigned x) {
  for (int i = 0; i < 40; ++i) x = x * 1103515245u + 12345u;   /* ~50 ns */
  return x;
}
int main(void) {
  unsigned x = 1;
  puts("ready");
  fflush(stdout);
  for (;;) {  /* ~10 us between calls: a recording of tens of MB, not GB */
    x = tiny(x);
    for (int i = 0; i < 4000; ++i) x = x * 1103515245u + 12345u;
    __asm__ volatile("" : "+r"(x));
  }
}
"""


def spin():
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF


def attach_once(callmon, exe, data, seconds):
    p = subprocess.Popen([exe], stdout=subprocess.PIPE, text=True)
    p.stdout.readline()
    try:
        r = subprocess.run([callmon, "record", "-p", str(p.pid), "-o", data, "--duration",
                            str(seconds)], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RuntimeError(f"record -p: {r.stderr.strip()}")
    finally:
        p.kill()
        p.wait()
    rep = subprocess.run([callmon, "report", "-d", data, "--format=json"], capture_output=True,
                         text=True, timeout=120, check=True)
    f = next(f for f in json.loads(rep.stdout)["functions"] if f["short_name"] == "tiny")
    info = subprocess.run([callmon, "info", "-d", data], capture_output=True, text=True,
                          timeout=120).stdout
    sched = next((l for l in info.splitlines() if l.startswith("scheduler:")), "")
    return f, sched


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--callmon", action="append", required=True, help="NAME=PATH")
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--spinners", type=int, default=2)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="callmon-attach-sched-")
    src = os.path.join(work, "tiny.c")
    open(src, "w").write(SOURCE)
    exe = os.path.join(work, "tiny")
    subprocess.run([args.cc, "-O2", "-g", "-fpatchable-function-entry=5", src, "-o", exe],
                   check=True)
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.spinners)]
    for s in spinners:
        s.start()
    figures = {name: [] for name, _ in (c.split("=", 1) for c in args.callmon)}
    try:
        for run in range(args.runs):  # interleaved
            for c in args.callmon:
                name, path = c.split("=", 1)
                data = os.path.join(work, f"{name}.{run}")
                f, sched = attach_once(path, exe, data, args.seconds)
                figures[name].append((f["max_ns"], f["total_ns"], f["preempted_ns"], f["calls"]))
                subprocess.run(["rm", "-rf", data])
                print(f"{name} run {run}: max {f['max_ns'] / 1e6:.3f} ms, total "
                      f"{f['total_ns'] / 1e6:.1f} ms, preempted {f['preempted_ns'] / 1e6:.1f} ms, "
                      f"{f['calls']} calls; {sched}", flush=True)
    finally:
        for s in spinners:
            s.terminate()
        subprocess.run(["rm", "-rf", work])
    print(f"load average {os.getloadavg()[0]:.1f}; medians over {args.runs} run(s):")
    for name, runs in figures.items():
        med = lambda i: statistics.median(r[i] for r in runs)
        print(f"  {name}: max {med(0) / 1e6:.3f} ms, total {med(1) / 1e6:.1f} ms, "
              f"preempted {med(2) / 1e6:.1f} ms, avg {med(1) / max(med(3), 1):.0f} ns/call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
