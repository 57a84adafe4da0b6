#!/usr/bin/env python3
"""Threads cancelled asynchronously (PTHREAD_CANCEL_ASYNCHRONOUS) wherever they are, probes
and the runtime's own work included, under callmon (tests/programs/async_cancel.c): several
recordings of 30 rounds of two cancelled threads must each exit as the program does without
callmon (status 0, same output: every join saw PTHREAD_CANCELED), and each recording must be
readable (`report`, exit 0).

Before the fix the -pg modes crashed (SIGSEGV: the forced unwind's pg_restore_returns read a
frame the interrupted entry hook had pushed but not filled) and a thread cancelled inside
the runtime's own work was joined with NULL (glibc 2.36's pthread_setcancelstate acting on
the pending cancellation without setting the result).

  run_async_cancel.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|pg|patch|xray \\
      --work DIR [--runs N]
Exit status: 0 passed, 1 failed.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)



def main():
    a = run_fixture.program_test_args(
        __doc__, ["cyg", "fentry", "pg", "patch", "xray"],
        lambda ap: ap.add_argument("--runs", type=int, default=4))
    exe = run_fixture.build_program(a, "async_cancel.c", ["-pthread"])
    problems = []
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=60, cwd=a.work)
    if plain.returncode != 0 or "30 rounds cancelled" not in plain.stdout:
        problems.append(f"plain run: status {plain.returncode}, output {plain.stdout!r}")
    record = [a.callmon, "record"] + (["--patch=."] if a.mode == "patch" else [])
    for run in range(a.runs):
        data = os.path.join(a.work, f"run{run}.data")
        rec = subprocess.run(record + ["-o", data, "--", exe], capture_output=True, text=True,
                             timeout=120, cwd=a.work)
        if rec.returncode != plain.returncode or rec.stdout != plain.stdout:
            problems.append(f"run {run} under callmon: status {rec.returncode}, output "
                            f"{rec.stdout!r} (without: {plain.stdout!r}), stderr:\n{rec.stderr}")
            continue
        rep = subprocess.run([a.callmon, "report", "-d", data], capture_output=True, text=True,
                             timeout=60)
        if rep.returncode != 0 or "leaf" not in rep.stdout:
            problems.append(f"run {run}: report status {rep.returncode}: {rep.stderr.strip()}")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
