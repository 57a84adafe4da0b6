#!/usr/bin/env python3
"""A program under an address-space limit (tests/programs/as_limit.c, `ulimit -v 1000000`:
about 1 GB): its eight threads' instrumented calls and main's 512 MB allocation must work
under callmon as they do without it, and every call be recorded. Each recorded thread used
to reserve 192 MiB of shadow stack, which the limit counts: the allocation failed.

  run_as_limit.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|patch --work DIR
Exit status: 0 passed, 1 failed.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

LIMITED = "ulimit -v 1000000 && exec \"$0\""


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "fentry", "patch"])
    exe = run_fixture.build_program(a, "as_limit.c", extra=["-pthread"])
    problems = []
    plain = subprocess.run(["sh", "-c", LIMITED, exe], capture_output=True, text=True,
                           timeout=60, cwd=a.work)
    if plain.returncode != 0 or "malloc(512 MB) ok" not in plain.stdout:
        problems.append(f"without callmon: status {plain.returncode}, {plain.stdout!r} "
                        f"{plain.stderr!r}")
    data = os.path.join(a.work, "limited.data")
    record = [a.callmon, "record", "-o", data] + (["--patch=."] if a.mode == "patch" else [])
    rec = subprocess.run(record + ["--", "sh", "-c", LIMITED, exe], capture_output=True,
                         text=True, timeout=120, cwd=a.work)
    if (rec.returncode, rec.stdout) != (plain.returncode, plain.stdout):
        problems.append(f"under callmon: status {rec.returncode}, output {rec.stdout!r} "
                        f"(without: {plain.stdout!r}), stderr {rec.stderr!r}")
    traced, err = run_fixture.recorded_counts(a.callmon, data)
    want = run_fixture.program_counts(rec.stderr).get("work")
    if err or not want or traced.get("work") != want:
        problems.append(f"work: {traced.get('work')} call(s) recorded, the program made "
                        f"{want} {err or ''}")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
