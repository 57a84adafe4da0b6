#!/usr/bin/env python3
"""The XRay mode's probe calibration (docs/modes.md, "XRay sleds"; runtime/calibration/
calibration_xray.cpp): a process whose XRay sleds are patched calibrates on probe functions
that go through the real XRay trampolines (callmon_calib_xray_parent, arch/x86_64/
xray_calib.S), not on the -finstrument-functions hooks' (calibration_parent); a
-finstrument-functions process still calibrates on its own hooks.

Each program (tests/programs' fib.c, built with clang -fxray-instrument and with gcc
-finstrument-functions) runs under gdb with the runtime preloaded and CALLMON_DIR set (what
`callmon record` sets up), breakpoints on both calibrations' parents; gdb's hit counts say
which one the start-up calibration called first. Then both are recorded with `callmon record` and
the meta file must hold a well-formed calibration (0 < inner <= outer). No figure is
compared: performance is not asserted (bench/run_compensation.py --mode xray measures it).

Exit status: 0 passed, 1 failed, 77 skipped (no gdb or clang). Python stdlib only.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(os.path.dirname(HERE), "..", "bench", "fib.c")
XRAY_PARENT = "callmon_calib_xray_parent"
CYG_PARENT = "callmon::rt::calibration_parent"


def hits(runtime, exe, work):
    """{breakpoint function: 1 if the run of `exe 15` under gdb stopped there first, else 0}."""
    data = os.path.join(work, "gdb." + os.path.basename(exe))
    shutil.rmtree(data, ignore_errors=True)
    os.makedirs(data)
    # gdb itself must not load the runtime: the preload is set for the program only.
    gdb = ["gdb", "-q", "-batch", "-nx", "-ex", f"set environment LD_PRELOAD {runtime}",
           "-ex", f"set environment CALLMON_DIR {data}", "-ex", "set breakpoint pending on",
           "-ex", "set startup-with-shell off", "-ex", f"break {XRAY_PARENT}",
           "-ex", f"break {CYG_PARENT}", "-ex", "run", "--args", exe, "15"]
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "CALLMON_DIR")}
    r = subprocess.run(gdb, capture_output=True, text=True, timeout=300, env=env)
    out = {}
    # gdb -batch ends at the first stop: the calibration's first round says which it is.
    for name in (XRAY_PARENT, CYG_PARENT):
        stopped = re.search(r"Breakpoint \d+, (0x[0-9a-f]+ in )?" + re.escape(name) + r"\b",
                            r.stdout)
        out[name] = 1 if stopped else 0
    return out, r.stdout + r.stderr


def meta_ok(callmon, exe, work):
    data = os.path.join(work, "rec." + os.path.basename(exe))
    shutil.rmtree(data, ignore_errors=True)
    r = subprocess.run([callmon, "record", "-o", data, "--", exe, "15"], capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        return f"record {exe}: {r.returncode} {r.stderr.strip()}"
    [meta] = [f for f in os.listdir(data) if f.endswith(".meta")]
    for line in open(os.path.join(data, meta)):
        f = line.split()
        if f[:1] == ["overhead"] and 0 < float(f[1]) <= float(f[2]):
            return None
    return f"{data}: no well-formed overhead line"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--runtime", required=True)
    ap.add_argument("--clang", required=True)
    ap.add_argument("--gcc", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    if not shutil.which("gdb") or not os.path.exists(a.clang) or not os.path.exists(a.gcc):
        print("skipped: gdb, clang or gcc missing")
        return 77
    os.makedirs(a.work, exist_ok=True)
    src = os.path.normpath(PROGRAM)
    xray = os.path.join(a.work, "fib.xray")
    cyg = os.path.join(a.work, "fib.cyg")
    subprocess.run([a.clang, "-O2", "-g", "-fxray-instrument", "-fxray-instruction-threshold=1",
                    "-o", xray, src], check=True)
    subprocess.run([a.gcc, "-O2", "-g", "-finstrument-functions", "-o", cyg, src], check=True)
    problems = []
    for exe, want in ((xray, XRAY_PARENT), (cyg, CYG_PARENT)):
        got, text = hits(a.runtime, exe, a.work)
        other = CYG_PARENT if want == XRAY_PARENT else XRAY_PARENT
        if got[want] != 1 or got[other] != 0:
            problems.append(f"{os.path.basename(exe)}: the calibration should call {want}, "
                            f"not {other}; gdb stopped in {got}:\n{text[-1500:]}")
        p = meta_ok(a.callmon, exe, a.work)
        if p:
            problems.append(p)
    for p in problems:
        print("FAIL:", p)
    print("FAILED" if problems else "passed", len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
