#!/usr/bin/env python3
"""A program started with its stderr closed (tests/programs/stderr_closed.c): its data file
takes fd 2, then its recording cannot grow. The runtime's diagnostic went to fd 2, into the
program's file, which the program prints back: its output must be as without callmon.

  run_stderr_closed.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|patch --work DIR
Exit status: 0 passed, 1 failed.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

CLOSED = 'exec "$0" "$1" 2>&-'


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "fentry", "patch"])
    exe = run_fixture.build_program(a, "stderr_closed.c")
    problems = []
    data_file = os.path.join(a.work, "data.txt")
    plain = subprocess.run(["sh", "-c", CLOSED, exe, data_file], capture_output=True,
                           text=True, timeout=60, cwd=a.work)
    if plain.returncode != 0 or not plain.stdout.startswith("data fd=2 "):
        problems.append(f"without callmon: status {plain.returncode}, {plain.stdout!r}")
    record = [a.callmon, "record", "-o", os.path.join(a.work, "closed.data")]
    record += ["--patch=."] if a.mode == "patch" else []
    rec = subprocess.run(record + ["--", "sh", "-c", CLOSED, exe, data_file],
                         capture_output=True, text=True, timeout=120, cwd=a.work)
    if (rec.returncode, rec.stdout) != (plain.returncode, plain.stdout):
        problems.append(f"under callmon: status {rec.returncode}, output {rec.stdout!r} "
                        f"(without: {plain.stdout!r})")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
