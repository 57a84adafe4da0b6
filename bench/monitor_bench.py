#!/usr/bin/env python3
"""Benchmark of `callmon monitor` (docs/monitor.md): breakpoint hits per second in the default
mode (emulating the displaced instruction, one stop per hit) against the naive re-arm
(--single-step: restore the byte, single-step, re-arm: two stops) on the same binary, and the
slowdown of --one-shot against the native run of a long-running program.

Usage: bench/monitor_bench.py --callmon build/bin/callmon [--calls N]
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

PROG = r"""
#include <stdlib.h>
__attribute__((noinline)) long hot(long x) { asm volatile(""); return x * 3 + 1; }
__attribute__((noinline)) long cold(long x) { asm volatile(""); return x ^ 5; }
int main(int argc, char** argv) {
  long n = argc > 1 ? strtol(argv[1], 0, 10) : 1000000, s = 0;
  for (long i = 0; i < n; i++) s += hot(i);
  s += cold(s);
  return (int)(s & 1);
}
"""


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--calls", type=int, default=200000, help="hits for the hits/s comparison")
    ap.add_argument("--long", type=int, default=300000000, help="calls of the native run")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "hot.c"), os.path.join(d, "hot")
        open(src, "w").write(PROG)
        subprocess.run(["gcc", "-O2", "-o", exe, src], check=True)
        out = os.path.join(d, "r.json")
        rates = {}
        for mode, extra in (("emulate", []), ("single-step", ["--single-step"])):
            t = timed([a.callmon, "monitor", *extra, "--format", "json", "-o", out, "--", exe,
                       str(a.calls)])
            img = json.load(open(out))["images"][0]
            rates[mode] = img["stops"] / t
            print(f"{mode:12s} {img['stops']} stops in {t:.2f}s: {rates[mode]:,.0f} hits/s "
                  f"(emulated {img['emulated']}, stepped {img['stepped']})")
        print(f"ratio emulate/single-step: {rates['emulate'] / rates['single-step']:.2f}x")
        native = min(timed([exe, str(a.long)]) for _ in range(3))
        oneshot = min(timed([a.callmon, "monitor", "--one-shot", "-o", out, "--", exe,
                             str(a.long)]) for _ in range(3))
        print(f"native {native:.3f}s, --one-shot {oneshot:.3f}s: slowdown "
              f"{oneshot / native:.3f}x ({a.long} calls of hot)")


if __name__ == "__main__":
    main()
