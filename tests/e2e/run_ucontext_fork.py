#!/usr/bin/env python3
"""fork while other threads switch ucontext coroutines (tests/programs/ucontext_fork.c):
under callmon every one of the 100 children must run its own switch and exit 0, as without
callmon. Before the fix a child forked while another thread held the table of suspended
contexts' lock waited for it forever (killed here by its own 10 s alarm).

  run_ucontext_fork.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|pg --work DIR
Exit status: 0 passed, 1 failed.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

WANT = "forks 100, children failed 0\n"


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "fentry", "pg"])
    exe = run_fixture.build_program(a, "ucontext_fork.c", ["-pthread"])
    problems = []
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=120, cwd=a.work)
    if plain.returncode != 0 or plain.stdout != WANT:
        problems.append(f"plain run: status {plain.returncode}, output {plain.stdout!r}")
    data = os.path.join(a.work, "fork.data")
    rec = subprocess.run([a.callmon, "record", "-o", data, "--", exe], capture_output=True,
                         text=True, timeout=600, cwd=a.work)
    if rec.returncode != 0 or rec.stdout != WANT:
        problems.append(f"under callmon: status {rec.returncode}, output {rec.stdout!r}, "
                        f"stderr {rec.stderr[-500:]!r}")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
