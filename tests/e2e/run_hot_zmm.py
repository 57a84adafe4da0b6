#!/usr/bin/env python3
"""zmm16-31 and the opmask registers across the probes' per-call slow paths (docs/patching.md,
"Vector registers"; runtime/arch/x86_64/xstate.inc).

Builds tests/programs/hot_zmm.c with -pg -mfentry: its caller keeps patterns in zmm16,
zmm17, zmm31 and k1-k7 across calls of `leaf`, of `skipped` and of `tailer` (a tail call of
`leaf`), and prints how many calls kept them all. Runs it
- recorded with a filter (--exclude=skipped, --include=leaf): every call takes the filter's
  slow path, through callmon_slow_call_hot;
- recorded plainly: the tail calls take theirs;
- recorded with --clock=monotonic: every call reads the clock behind callmon_slow_call_hot;
- under `callmon run` with a monitor whose callbacks overwrite zmm16-31 and k1-k7
  (hot_zmm_monitor.cpp): callbacks are the program's code, run behind callmon_slow_call;
and checks the program's output (every call kept them), its exit status and, for the
recordings, the call counts `callmon report` finds. Skipped (77) without AVX-512F.

Exit status: 0 passed, 1 failed, 77 skipped. Python stdlib only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
PROGRAMS = os.path.join(TESTS, "programs")
SOURCE = os.path.dirname(TESTS)
ROUNDS = 20000  # three calls each: enough for the trace window to grow several times

# (name, `record` options or None for the monitor, the functions recorded)
CASES = [
    ("filter-exclude", ["--exclude=skipped"], {"leaf", "tailer"}),
    ("filter-include", ["--include=leaf"], {"leaf"}),
    ("tail-calls", [], {"leaf", "tailer", "skipped"}),
    ("monotonic", ["--clock=monotonic"], {"leaf", "tailer", "skipped"}),
    ("monotonic-filter", ["--clock=monotonic", "--exclude=skipped"], {"leaf", "tailer"}),
    ("monitor", None, set()),
]


def avx512f():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return "avx512f" in line.split(":", 1)[1].split()
    except OSError:
        pass
    return False


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=240, **kw)


def counts(callmon, data):
    """{function: calls} from `callmon report --format=json`, or the error."""
    r = run([callmon, "report", "--format=json", "-d", data])
    if r.returncode != 0:
        return r.stderr.strip()
    out = {}
    for row in json.loads(r.stdout).get("functions", []):
        name = row.get("name", "").split("(")[0]
        out[name] = out.get(name, 0) + row.get("calls", 0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    if not avx512f():
        print("SKIP: no AVX-512F on this processor (zmm16-31, opmask)")
        return 77
    os.makedirs(args.work, exist_ok=True)
    prog = os.path.join(args.work, "hot_zmm")
    monitor = os.path.join(args.work, "hot_zmm_monitor.so")
    builds = [
        [args.cc, "-O2", "-g", "-pg", "-mfentry", "-I", PROGRAMS,
         os.path.join(PROGRAMS, "hot_zmm.c"), "-o", prog],
        [args.cxx, "-O2", "-std=c++20", "-shared", "-fPIC", "-I", os.path.join(SOURCE, "include"),
         os.path.join(HERE, "hot_zmm_monitor.cpp"), "-o", monitor],
    ]
    for cmd in builds:
        r = run(cmd)
        if r.returncode != 0:
            print(f"FAIL: {' '.join(cmd)}\n{r.stderr}")
            return 1
    want = f"zmm16 zmm17 zmm31 k1-k7 kept across {3 * ROUNDS} of {3 * ROUNDS} calls\n"
    failures = []
    for name, record, recorded in CASES:
        data = os.path.join(args.work, name)
        if record is None:
            cmd = [args.callmon, "run", "--monitor", monitor, "--", prog, str(ROUNDS)]
        else:
            shutil.rmtree(data, ignore_errors=True)
            cmd = [args.callmon, "record", "-o", data, *record, "--", prog, str(ROUNDS)]
        r = run(cmd)
        problems = []
        if r.returncode != 0:
            problems.append(f"exit status {r.returncode}: {r.stderr.strip()[-400:]}")
        if r.stdout != want:
            problems.append(f"output {r.stdout!r}, want {want!r}")
        if record is not None and not problems:
            got = counts(args.callmon, data)
            # `leaf` is called directly and through `tailer`'s tail call.
            expect = {f: (2 * ROUNDS if f == "leaf" else ROUNDS) for f in recorded}
            if isinstance(got, str) or {f: got.get(f, 0) for f in
                                        ("leaf", "tailer", "skipped")} != \
                    {f: expect.get(f, 0) for f in ("leaf", "tailer", "skipped")}:
                problems.append(f"calls {got}, want {expect}")
        print(f"{'ok  ' if not problems else 'FAIL'} {name}: {' '.join(cmd[1:])}", flush=True)
        for p in problems:
            print("     " + p)
        failures += problems
    print(f"{len(failures)} problems" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
