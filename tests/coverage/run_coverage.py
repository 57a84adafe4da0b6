#!/usr/bin/env python3
"""End-to-end test of `callmon coverage` in one build mode.

Builds tests/coverage/cov_main.c (instrumented), cov_lib.c (an instrumented shared
library) and cov_plain.c (not instrumented), records the program twice with different
arguments, and checks: the exact functions listed (instrumented ones only: not
plain_helper, not libc), their call counts, --merge, --uncalled, the per-file totals, JSON
and HTML, and --fail-under's exit status.

  run_coverage.py --callmon CALLMON --cc CC --flags "-finstrument-functions -O2" --work DIR
Exit 0 passed, 1 failed.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MAIN_FUNCS = ["always", "with_a", "with_b", "never_called", "main"]
LIB_FUNCS = ["lib_called", "lib_never"]


def run(cmd, cwd, check=True):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    return p


def build(cc, flags, work):
    f = shlex.split(flags)
    run([cc, "-g", *f, "-fPIC", "-shared", os.path.join(HERE, "cov_lib.c"), "-o",
         "libcovlib.so"], work)
    run([cc, "-g", "-O2", "-c", os.path.join(HERE, "cov_plain.c"), "-o", "cov_plain.o"], work)
    run([cc, "-g", *f, os.path.join(HERE, "cov_main.c"), "cov_plain.o", "-L.", "-lcovlib",
         "-Wl,-rpath," + work, "-o", "cov"], work)
    run([cc, "-g", *f, os.path.join(HERE, "cov_fork.c"), "-o", "cov_fork"], work)


def coverage_json(callmon, work, *args):
    p = run([callmon, "coverage", "--format=json", *args], work)
    return json.loads(p.stdout)


def counts(cov):
    """{module basename: {function: calls}}"""
    return {os.path.basename(m["path"]): {f["name"]: f["calls"] for f in m["functions"]}
            for m in cov["modules"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--flags", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    build(a.cc, a.flags, a.work)
    run([a.callmon, "record", "-o", "r1", "--", "./cov", "a"], a.work)
    run([a.callmon, "record", "-o", "r2", "--", "./cov", "b", "b"], a.work)

    failures = []

    def expect(what, want, got):
        if want != got:
            failures.append(f"{what}:\n  expected {want}\n  got      {got}")

    one = coverage_json(a.callmon, a.work, "-d", "r1")
    expect("r1 counts", {"cov": {"always": 4, "with_a": 1, "with_b": 0, "never_called": 0,
                                 "main": 1},
                         "libcovlib.so": {"lib_called": 0, "lib_never": 0}}, counts(one))
    expect("r1 totals", (7, 3), (one["functions_total"], one["functions_called"]))

    both = coverage_json(a.callmon, a.work, "-d", "r1", "--merge", "r2")
    expect("merged counts", {"cov": {"always": 8, "with_a": 1, "with_b": 2, "never_called": 0,
                                     "main": 2},
                             "libcovlib.so": {"lib_called": 2, "lib_never": 0}}, counts(both))
    expect("merged totals", (2, 7, 5, round(100 * 5 / 7, 6)),
           (both["recordings"], both["functions_total"], both["functions_called"],
            round(both["percent"], 6)))
    files = {os.path.basename(f["file"]): (f["functions_total"], f["functions_called"])
             for m in both["modules"] for f in m["files"]}
    expect("per-file totals", {"cov_main.c": (5, 4), "cov_lib.c": (2, 1)}, files)

    uncalled = coverage_json(a.callmon, a.work, "-d", "r1", "--merge", "r2", "--uncalled")
    expect("--uncalled", {"cov": {"never_called": 0}, "libcovlib.so": {"lib_never": 0}},
           counts(uncalled))

    text = run([a.callmon, "coverage", "-d", "r1", "--merge", "r2"], a.work).stdout
    if "never_called" not in text or "[never called]" not in text or "5/7 (71.4%)" not in text:
        failures.append("text output lacks the never-called mark or the totals:\n" + text)
    run([a.callmon, "coverage", "-d", "r1", "--format=html", "-o", "cov.html"], a.work)
    with open(os.path.join(a.work, "cov.html")) as f:
        html = f.read()
    if 'class="never"' not in html or "lib_never" not in html or "3/7" not in html:
        failures.append("HTML page lacks the never-called rows or the totals")

    gate = run([a.callmon, "coverage", "-d", "r1", "--merge", "r2", "--fail-under", "80"],
               a.work, check=False)
    expect("--fail-under 80 on 71.4%: status", 3, gate.returncode)
    if "under the required 80.0%" not in gate.stderr:
        failures.append("--fail-under: no error line:\n" + gate.stderr)
    gate = run([a.callmon, "coverage", "-d", "r1", "--merge", "r2", "--fail-under", "70"],
               a.work, check=False)
    expect("--fail-under 70 on 71.4%: status", 0, gate.returncode)

    # Live: the same counts without a recording, alone and merged with a recording.
    live = run([a.callmon, "coverage", "--format=json", "-o", "live.json", "--", "./cov", "a"],
               a.work)
    with open(os.path.join(a.work, "live.json")) as f:
        expect("live counts", counts(one), counts(json.load(f)))
    run([a.callmon, "coverage", "--format=json", "-o", "live2.json", "--merge", "r2", "--",
         "./cov", "a"], a.work)
    with open(os.path.join(a.work, "live2.json")) as f:
        expect("live merged with r2", counts(both), counts(json.load(f)))
    gate = run([a.callmon, "coverage", "-o", "gate.txt", "--fail-under", "50", "--", "./cov",
                "a"], a.work, check=False)
    expect("live --fail-under 50 on 42.9%: status", 3, gate.returncode)
    # A fork: each process counted once; the program's output and status pass through.
    forked = run([a.callmon, "coverage", "--format=json", "-o", "fork.json", "--",
                  "./cov_fork"], a.work)
    expect("live fork: program output", "16", forked.stdout.strip())
    with open(os.path.join(a.work, "fork.json")) as f:
        expect("live fork counts", {"cov_fork": {"leaf": 5, "child_only": 1, "never": 0,
                                                 "main": 1}}, counts(json.load(f)))

    for f in failures:
        print("FAIL: " + f)
    print("PASS" if not failures else f"{len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
