#!/usr/bin/env python3
"""Signal handlers on an alternate stack of MINSIGSTKSZ + 1 KiB (tests/programs/
small_altstack.c): under callmon the program's output and status must be as without it
(the hooks' slow paths took a 1 KiB buffer there: SIGSEGV), and every call be recorded.
Not the -finstrument-functions build: its handler's first calls bind lazily through the
PLT, which overflows such a stack without callmon too.

  run_small_altstack.py --callmon build/bin/callmon --cc gcc --mode fentry|pg|patch --work DIR
Exit status: 0 passed, 1 failed.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)


def main():
    a = run_fixture.program_test_args(__doc__, ["fentry", "pg", "patch"])
    exe = run_fixture.build_program(a, "small_altstack.c", extra=["-pthread"])
    problems = []
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=60, cwd=a.work)
    if plain.returncode != 0 or not plain.stdout.startswith("result "):
        problems.append(f"without callmon: status {plain.returncode}, {plain.stdout!r}")
    data = os.path.join(a.work, "altstack.data")
    record = [a.callmon, "record", "-o", data] + (["--patch=."] if a.mode == "patch" else [])
    rec = subprocess.run(record + ["--", exe], capture_output=True, text=True, timeout=120,
                         cwd=a.work)
    if (rec.returncode, rec.stdout) != (plain.returncode, plain.stdout):
        problems.append(f"under callmon: status {rec.returncode}, output {rec.stdout!r} "
                        f"(without: {plain.stdout!r}), stderr {rec.stderr!r}")
    else:
        traced, err = run_fixture.recorded_counts(a.callmon, data)
        if err or traced.get("inner") != 100 or traced.get("leaf") != 201:
            problems.append(f"recorded inner {traced.get('inner')}, leaf {traced.get('leaf')}"
                            f" (wanted 100 and 201) {err or ''}")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
