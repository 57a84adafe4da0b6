#!/usr/bin/env python3
"""Stress (and fault) test of one fixture program whose output varies from run to run.

Like tests/e2e/run_fixture.py (whose build and helpers it reuses), but for programs that
print what they did (how many signals they handled, ...): the fixture's STDOUT_RE must match
the program's output both without and under `callmon record`, and the fixture's
check(result) compares the recording with what the program printed. result has: stdout
(of the recorded run), match (the regex match), counts (calls per function from `report
--format=json`), info (`info --format=json`), per_process ({process key: counts} from
`report --per-process`, when the fixture sets PER_PROCESS_CHECK) and record (the finished
`callmon record` process). Every run's time is printed.

Fixtures live in tests/e2e/fixtures/<name>.py next to the exact ones.
Exit status: 0 passed, 1 failed, 77 skipped. Python stdlib only.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
E2E = os.path.join(os.path.dirname(HERE), "e2e")
sys.path.insert(0, E2E)
import run_fixture as rf  # noqa: E402


class Result:
    pass


def timed(what, cmd, cwd, timeout=rf.RUN_TIMEOUT):
    start = time.monotonic()
    proc = rf.run(cmd, cwd, timeout=timeout)
    print(f"{what}: {time.monotonic() - start:.2f} s, status {proc.returncode}", flush=True)
    return proc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("--callmon", "--fixture", "--cc", "--cxx", "--work"):
        ap.add_argument(name, required=True)
    ap.add_argument("--compiler", required=True, choices=["gcc", "clang"])
    ap.add_argument("--opt", required=True, choices=["O0", "O2"])
    ap.add_argument("--mode", default="cyg", choices=sorted(rf.MODE_FLAGS),
                    help="hook mode, as in run_fixture.py")
    ap.add_argument("--record-arg", action="append", default=[])
    ap.add_argument("--competing", type=int, default=0,
                    help="spinning processes that compete for the CPUs while the program "
                         "is recorded (preempted often, a signal storm's handlers land at "
                         "more places of the hooks)")
    args = ap.parse_args()
    rf.expect.MODE, rf.expect.OPT, rf.expect.COMPILER = args.mode, args.opt, args.compiler
    for tool in (args.cc, args.cxx):
        if not tool or tool.endswith("-NOTFOUND") or not shutil.which(tool):
            print(f"SKIP: compiler {args.compiler} not found ({tool})")
            return rf.SKIP
    fx = rf.load_fixture(args.fixture)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    failures = rf.Failures()
    try:
        rf.build(fx, args, args.work)
    except RuntimeError as e:
        print(f"FAIL: {e}")
        return 1
    argv = ["./" + fx.PROGRAM] + list(getattr(fx, "ARGS", []))
    pattern = re.compile(fx.STDOUT_RE)

    plain = timed("plain run", argv, args.work)
    if not pattern.fullmatch(plain.stdout):
        failures.add("plain run: stdout", f"  expected to match {fx.STDOUT_RE!r}\n"
                                          f"  got: {plain.stdout[:500]!r}")
    failures.check_equal("plain run: exit status", fx.STATUS, plain.returncode)

    data = os.path.join(args.work, "callmon.data")
    spinners = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(args.competing)]
    try:
        rec = timed("callmon record", [args.callmon, "record", "--no-libcall", "-o", data] +
                    rf.MODE_RECORD_ARGS.get(args.mode, []) + args.record_arg + ["--"] + argv,
                    args.work)
    finally:
        for sp in spinners:
            sp.kill()
            sp.wait()
    match = pattern.fullmatch(rec.stdout)
    if not match:
        failures.add("record: program's stdout", f"  expected to match {fx.STDOUT_RE!r}\n"
                                                 f"  got: {rec.stdout[:500]!r}\n" + rf.describe(rec))
    if rec.returncode != rf.callmon_status(fx.STATUS):
        failures.add("record: exit status", f"  expected {fx.STATUS}\n" + rf.describe(rec))
    if not os.path.isdir(data) or not match:
        return rf.finish(failures)

    r = Result()
    r.stdout, r.match, r.record = rec.stdout, match, rec
    r.info = rf.json_of(timed("info", [args.callmon, "info", "--format=json", "-d", data],
                              args.work), "info --format=json", failures)
    report = rf.json_of(timed("report", [args.callmon, "report", "--format=json", "-d", data],
                              args.work), "report --format=json", failures)
    if r.info is None or report is None:
        return rf.finish(failures)
    r.counts = rf.function_counts(report.get("functions", []), "report", failures)
    if r.info.get("calls") != sum(r.counts.values()):
        failures.add("info calls vs report", f"  info {r.info.get('calls')}, "
                                             f"report {sum(r.counts.values())}")
    if getattr(fx, "PER_PROCESS_CHECK", False):
        per = rf.json_of(timed("report --per-process",
                               [args.callmon, "report", "--format=json", "--per-process",
                                "-d", data], args.work), "report --per-process", failures)
        r.per_process = {}
        for group in (per or {}).get("groups", []):
            r.per_process[group.get("process")] = rf.function_counts(
                group.get("functions", []), "group", failures)
    for problem in fx.check(r):
        failures.add(problem.split(":")[0], "  " + problem)
    return rf.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
