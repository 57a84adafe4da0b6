#!/usr/bin/env python3
"""Two (or more) builds of callmon side by side in one session: runs one of the bench
scripts (run_fib.py, run_patch.py, run_libcall.py, ...) with each build's `--callmon` in
turn, --rounds times (a, b, a, b, ...: a change in the machine's load hits both alike),
and prints, for every row whose name starts with "callmon", the median over the rounds of
one number of that row (and of run_fib.py's --also rows under it, named after it)
(--field: its index among the row's decimal numbers; run_fib.py's
marginal ns/call is 2, run_patch.py's ns/call 1, run_libcall.py's ns per library call 1),
with its range and the ratio to the first build. The load average before and after is
printed too. Run by hand, e.g. before and after a runtime change:

    python3 bench/side_by_side.py --build base=/path/to/old/build/bin/callmon \
        --build new=build/bin/callmon --rounds 5 --field 2 -- \
        bench/run_fib.py --mode cyg,fentry,pg --clock cpu --runs 1
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROW = re.compile(r"^(callmon.*?)\s{2,}(-?\d.*)$")
# run_fib.py's --also rows ("  --min-duration=1000  ..."), named after the callmon row above.
ALSO = re.compile(r"^\s+(--\S+)\s{2,}(-?\d.*)$")
NUMBER = re.compile(r"-?\d+\.\d+")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", action="append", required=True, metavar="NAME=CALLMON")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--field", type=int, required=True)
    ap.add_argument("script", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    script = a.script[1:] if a.script and a.script[0] == "--" else a.script
    if not script:
        ap.error("no bench script given")
    builds = [b.split("=", 1) for b in a.build]
    print("load average before:", open("/proc/loadavg").read().strip(), flush=True)
    values = {}  # (row, build) -> [value per round]
    rows = []
    for r in range(a.rounds):
        for name, callmon in builds:
            out = subprocess.run([sys.executable] + script + ["--callmon", os.path.abspath(callmon)],
                                 capture_output=True, text=True, check=True).stdout
            last = None
            for line in out.splitlines():
                m = ROW.match(line)
                if m:
                    last = m.group(1).strip()
                else:
                    m = ALSO.match(line)
                    if not m or not last:
                        continue
                nums = NUMBER.findall(m.group(2))
                if len(nums) <= a.field:
                    continue
                row = m.group(1).strip() if m.re is ROW else f"{last} {m.group(1)}"
                if row not in rows:
                    rows.append(row)
                values.setdefault((row, name), []).append(float(nums[a.field]))
            print(f"round {r + 1} {name} done", file=sys.stderr, flush=True)
    print("load average after:", open("/proc/loadavg").read().strip())
    print(f"{' '.join(script)}; field {a.field}, median (min-max) of {a.rounds} rounds")
    head = f"{'row':48}" + "".join(f" {n:>20}" for n, _ in builds)
    if len(builds) > 1:
        head += "".join(f" {n + '/' + builds[0][0]:>10}" for n, _ in builds[1:])
    print(head)
    for row in rows:
        meds, cells = [], []
        for name, _ in builds:
            v = values.get((row, name), [])
            med = statistics.median(v) if v else float("nan")
            meds.append(med)
            cells.append(f"{med:.1f} ({min(v):.1f}-{max(v):.1f})" if v else "-")
        line = f"{row:48}" + "".join(f" {c:>20}" for c in cells)
        if len(builds) > 1:
            line += "".join(f" {m / meds[0]:10.2f}" if meds[0] else f" {'':10}" for m in meds[1:])
        print(line)


if __name__ == "__main__":
    main()
