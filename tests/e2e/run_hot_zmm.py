#!/usr/bin/env python3
"""zmm16-31 and the opmask registers across the probes' per-call slow paths (docs/patching.md,
"Vector registers"; runtime/arch/x86_64/xstate.inc).

Builds tests/programs/hot_zmm.c with -pg -mfentry and with no hook (for --patch): its
caller keeps patterns in zmm16, zmm17, zmm31 and k1-k7 across calls of `leaf`, of
`skipped` and of `tailer` (a tail call of `leaf`), and prints how many calls kept them all.
Records it
- with a filter (--exclude=skipped, --include=leaf): every call takes the filter's slow
  path, through callmon_slow_call_hot;
- plainly: the tail calls take theirs;
- with --clock=monotonic: every call reads the clock behind callmon_slow_call_hot;
- the plain build with --patch, with a filter, plainly and on the monotonic clock: the same
  slow paths reached from patched entries and their returns (Reach::kHot), where a caller
  built with -fipa-ra may keep such values;
and checks the program's output (every call kept them), its exit status and the call counts
`callmon report` finds. Skipped (77) without AVX-512F.

No monitor: at an __fentry__ call zmm16-31 and k0-7 are the callee's to clobber by the ABI
(gcc keeps nothing across a call to a -pg function; hot_zmm.c's asm caller is not code a
compiler makes there), so a monitor's callbacks run on the hot save and may (the monitor
case is e2e.monitor_abi.*'s); a --patch'ed point would keep them, but a process runs a
monitor or records, and only recording patches: the audit (fast_path_audit.py) checks that
a patched point's slow paths never reach a monitor behind callmon_slow_call_hot.

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

# (name, build, `record` options, the functions recorded)
PATCH = "--patch=^(leaf|tailer|skipped)$"
CASES = [
    ("filter-exclude", "fentry", ["--exclude=skipped"], {"leaf", "tailer"}),
    ("filter-include", "fentry", ["--include=leaf"], {"leaf"}),
    ("tail-calls", "fentry", [], {"leaf", "tailer", "skipped"}),
    ("monotonic", "fentry", ["--clock=monotonic"], {"leaf", "tailer", "skipped"}),
    ("monotonic-filter", "fentry", ["--clock=monotonic", "--exclude=skipped"], {"leaf", "tailer"}),
    ("patch-filter", "plain", [PATCH, "--exclude=skipped"], {"leaf", "tailer"}),
    ("patch-tail-calls", "plain", [PATCH], {"leaf", "tailer", "skipped"}),
    ("patch-monotonic", "plain", [PATCH, "--clock=monotonic", "--include=leaf"], {"leaf"}),
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
    progs = {"fentry": os.path.join(args.work, "hot_zmm"),
             "plain": os.path.join(args.work, "hot_zmm_plain")}
    builds = [
        [args.cc, "-O2", "-g", "-pg", "-mfentry", "-I", PROGRAMS,
         os.path.join(PROGRAMS, "hot_zmm.c"), "-o", progs["fentry"]],
        [args.cc, "-O2", "-g", "-DHOT_ZMM_PLAIN", "-I", PROGRAMS,
         os.path.join(PROGRAMS, "hot_zmm.c"), "-o", progs["plain"]],
    ]
    for cmd in builds:
        r = run(cmd)
        if r.returncode != 0:
            print(f"FAIL: {' '.join(cmd)}\n{r.stderr}")
            return 1
    want = f"zmm16 zmm17 zmm31 k1-k7 kept across {3 * ROUNDS} of {3 * ROUNDS} calls\n"
    failures = []
    for name, build, record, recorded in CASES:
        data = os.path.join(args.work, name)
        shutil.rmtree(data, ignore_errors=True)
        cmd = [args.callmon, "record", "-o", data, *record, "--", progs[build], str(ROUNDS)]
        r = run(cmd)
        problems = []
        if r.returncode != 0:
            problems.append(f"exit status {r.returncode}: {r.stderr.strip()[-400:]}")
        if r.stdout != want:
            problems.append(f"output {r.stdout!r}, want {want!r}")
        if not problems:
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
