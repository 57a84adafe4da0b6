#!/usr/bin/env python3
"""Library-call compensation (docs/runtime.md, "Library calls' own cost"): how close a
recorded library call's compensated time comes to the same work timed without callmon,
with the library-call probe's own calibration and without it.

Builds bench/libcall_strlen.c (-O2 -fno-builtin) plainly and with -finstrument-functions
(or --flags). Each run: the plain build timed by itself (ns per strlen call over the loop),
then the instrumented build under `callmon record`, whose strlen total / calls from
`callmon report --format=json` is the compensated figure "after"; the same recording with its
meta files' `overhead-libcall` lines removed gives "before" (library calls then charged the
other probe's cost, as older recordings are). Medians over --runs runs. Run by hand:

    python3 bench/run_libcall_cost.py [--n 200000] [--runs 7] [--callmon build/bin/callmon]
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def strlen_ns(callmon, rec):
    out = subprocess.run([callmon, "report", "--format=json", "-d", rec], check=True,
                         capture_output=True, text=True).stdout
    for f in json.loads(out)["functions"]:
        if f["name"] == "strlen":
            return f["total_ns"] / f["calls"]
    raise SystemExit("no strlen in the report")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--flags", default="-finstrument-functions")
    ap.add_argument("--callmon", default=os.path.join(ROOT, "build", "bin", "callmon"))
    a = ap.parse_args()
    w = tempfile.mkdtemp(prefix="callmon-libcall-cost.")
    src = os.path.join(ROOT, "bench", "libcall_strlen.c")
    for name, flags in (("plain", []), ("probed", a.flags.split())):
        subprocess.run([a.cc, "-O2", "-g", "-fno-builtin"] + flags + [src, "-o",
                        os.path.join(w, name)], check=True)
    plain, before, after, costs = [], [], [], []
    for _ in range(a.runs):
        out = subprocess.run([os.path.join(w, "plain"), str(a.n)], check=True,
                             capture_output=True, text=True).stdout
        plain.append(float(out.split()[0]))
        rec = os.path.join(w, "rec")
        subprocess.run(["rm", "-rf", rec], check=True)
        subprocess.run([a.callmon, "record", "-o", rec, "--", os.path.join(w, "probed"),
                        str(a.n)], check=True, capture_output=True)
        after.append(strlen_ns(a.callmon, rec))
        for meta in glob.glob(os.path.join(rec, "*.meta")):
            with open(meta) as f:
                text = f.read()
            m = re.search(r"^overhead (\S+) (\S+)\n(?:.*\n)*?overhead-libcall (\S+) (\S+)$",
                          text, re.M)
            if m:
                costs.append(tuple(float(x) for x in m.groups()))
            with open(meta, "w") as f:
                f.write(re.sub(r"^overhead-libcall .*\n", "", text, flags=re.M))
        before.append(strlen_ns(a.callmon, rec))
    med = statistics.median
    print(f"load average: {os.getloadavg()[0]:.1f}; {a.runs} runs of {a.n} strlen calls, "
          f"{a.flags}")
    if costs:
        c = [med(x) for x in zip(*costs)]
        print(f"calibrated (ticks): probe inner {c[0]:.1f} outer {c[1]:.1f}, library-call "
              f"probe inner {c[2]:.1f} outer {c[3]:.1f}")
    print(f"plain (no callmon), ns per strlen:        {med(plain):7.2f}  (runs: "
          f"{', '.join(f'{x:.2f}' for x in plain)})")
    print(f"recorded, compensated without overhead-libcall: {med(before):7.2f}  (runs: "
          f"{', '.join(f'{x:.2f}' for x in before)})")
    print(f"recorded, compensated with overhead-libcall:    {med(after):7.2f}  (runs: "
          f"{', '.join(f'{x:.2f}' for x in after)})")


if __name__ == "__main__":
    main()
