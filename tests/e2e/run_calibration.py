#!/usr/bin/env python3
"""The probe cost's second calibration at process exit (docs/runtime.md, "Overhead
compensation").

Builds tests/programs/calibration_exit.c in the hook modes below and records it twice per
mode: sleeping 0 ms (the process lives a few hundred microseconds: one calibration, the
start-up one) and 400 ms (long enough for the second one even if a calibration took 10 ms:
two). Checks that
- the meta file has that many `overhead` lines, each well-formed (0 < inner <= outer);
- with the fenced clock each is followed by its own `overhead-exposed` line, within it;
  without it, none;
- `callmon info --format=json` shows the cheapest calibration as the probe cost (in ns;
  with the fenced clock at least that: the expected host bursts add to it) and the number
  of calibrations;
- the program's output is unchanged and `callmon report` reads the recording and counts
  the calls.

Exit status: 0 passed, 1 failed. Python stdlib only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(os.path.dirname(HERE), "programs")
sys.path.insert(0, HERE)
import run_fixture  # noqa: E402  (MODE_FLAGS, meta_calibrations, calibration_problems)

VARIANTS = [("cyg", []), ("cyg", ["--clock=tsc-fenced"]), ("fentry", []),
            ("fentry", ["--clock=tsc-fenced"])]


def info_problems(callmon, data, meta, cals, fenced, name):
    """`callmon info --format=json` shows the cost compensation takes: the cheapest
    calibration (by outer cost) in ns, more by the expected host bursts with the fenced
    clock, and how many calibrations there were."""
    r = subprocess.run([callmon, "info", "--format=json", "-d", data], capture_output=True,
                       text=True)
    if r.returncode != 0:
        return [f"{name}: info failed: {r.stderr.strip()}"]
    [proc] = json.loads(r.stdout)["processes"]
    cost = proc.get("probe_cost")
    hz = [float(l.split()[2]) for l in open(os.path.join(data, meta)) if l.startswith("clock ")]
    inner, outer, _ = min(cals, key=lambda c: c[1])
    want_in, want_out = inner / hz[0] * 1e9, outer / hz[0] * 1e9
    if not cost or cost["calibrations"] != len(cals):
        return [f"{name}: info's probe cost {cost}, {len(cals)} calibrations in the meta file"]
    close = lambda a, b: abs(a - b) <= 1e-3 * b
    if fenced:
        ok = cost["inner_ns"] >= want_in * (1 - 1e-3) and cost["outer_ns"] >= want_out * (1 - 1e-3)
    else:
        ok = close(cost["inner_ns"], want_in) and close(cost["outer_ns"], want_out)
    if not ok:
        return [f"{name}: info's probe cost {cost}, the cheapest calibration "
                f"{want_in:.2f}/{want_out:.2f} ns"]
    return []


def check(callmon, exe, mode, extra, ms, work):
    """Problems of one recording (a list of strings)."""
    name = " ".join([mode, *extra, f"{ms} ms"])
    data = os.path.join(work, f"rec.{mode}.{len(extra)}.{ms}")
    shutil.rmtree(data, ignore_errors=True)
    r = subprocess.run([callmon, "record", *extra, "-o", data, "--", exe, str(ms)],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or r.stdout != "11\n":
        return [f"{name}: status {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}"]
    metas = [f for f in os.listdir(data) if f.endswith(".meta")]
    if len(metas) != 1:
        return [f"{name}: {len(metas)} meta files"]
    try:
        cals = run_fixture.meta_calibrations(os.path.join(data, metas[0]))
    except ValueError as e:
        return [f"{name}: {e}"]
    want = 1 if ms == 0 else 2
    problems = [] if len(cals) == want else [f"{name}: {len(cals)} calibrations, expected {want}"]
    fenced = "--clock=tsc-fenced" in extra
    problems += [f"{name}: {p}" for p in run_fixture.calibration_problems(cals, fenced)]
    problems += info_problems(callmon, data, metas[0], cals, fenced, name)
    rep = subprocess.run([callmon, "report", "--format=json", "-d", data],
                         capture_output=True, text=True)
    if rep.returncode != 0:
        return problems + [f"{name}: report failed: {rep.stderr.strip()}"]
    calls = {f["name"]: f["calls"] for f in json.loads(rep.stdout)["functions"]}
    if calls.get("work") != 2:
        problems.append(f"{name}: report counts work() {calls.get('work')} times, expected 2")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    problems = []
    for mode in sorted({m for m, _ in VARIANTS}):
        exe = os.path.join(args.work, f"calibration_exit.{mode}")
        subprocess.run([args.cc, "-O2", *run_fixture.MODE_FLAGS[mode], "-I", PROGRAMS,
                        os.path.join(PROGRAMS, "calibration_exit.c"), "-o", exe], check=True)
        for m, extra in VARIANTS:
            if m == mode:
                for ms in (0, 400):
                    problems += check(args.callmon, exe, mode, extra, ms, args.work)
    for p in problems:
        print(p)
    print(f"{len(VARIANTS) * 2} recordings, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
