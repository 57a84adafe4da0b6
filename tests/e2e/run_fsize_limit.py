#!/usr/bin/env python3
"""A program that lowers its own RLIMIT_FSIZE below what its recording needs
(tests/programs/fsize_limit.c) runs as without callmon: the recorder's writes past the limit
are not made (the meta file's lines whole or not at all) and the SIGXFSZ the kernel raises
for them is taken back (before: the meta line of its new thread killed the program,
status 153). The recording stays readable: `report` works and `info` says where the main
thread's recording stopped.

  run_fsize_limit.py --callmon build/bin/callmon --cc gcc --mode cyg --work DIR

-finstrument-functions only: a -pg build dies of SIGXFSZ by itself, writing gmon.out at
exit past the limit (under callmon, which takes gmon.out's place, it does not).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg"])
    exe = run_fixture.build_program(a, "fsize_limit.c", ["-pthread"])
    problems = []
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    if plain.returncode != 3:
        problems.append(f"without callmon: status {plain.returncode}")
    data = os.path.join(a.work, "rec")
    rec = subprocess.run([a.callmon, "record", "-o", data, "--", exe], capture_output=True,
                         text=True, timeout=120)
    if rec.stdout != plain.stdout or rec.returncode != plain.returncode:
        problems.append(f"under callmon: status {rec.returncode}, output {rec.stdout!r}; "
                        f"without: {plain.returncode}, {plain.stdout!r}; stderr "
                        f"{rec.stderr[-300:]!r}")
    rep = subprocess.run([a.callmon, "report", "-d", data], capture_output=True, text=True,
                         timeout=60)
    if rep.returncode != 0 or "main" not in rep.stdout:
        problems.append(f"report: status {rep.returncode}: {rep.stderr[-300:]}")
    info = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                          timeout=60)
    if info.returncode != 0 or "stopped early" not in info.stdout:
        problems.append("info does not say the main thread's recording stopped:\n" +
                        info.stdout[-400:] + info.stderr[-300:])
    return run_fixture.report_problems(problems)

if __name__ == "__main__":
    sys.exit(main())
