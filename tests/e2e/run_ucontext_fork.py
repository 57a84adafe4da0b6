#!/usr/bin/env python3
"""fork while other threads switch ucontext coroutines (tests/programs/ucontext_fork.c):
under callmon every one of the 100 children must run its own switch and exit 0, as without
callmon. Before the fix a child forked while another thread held the table of suspended
contexts' lock waited for it forever (killed here by its own 10 s alarm).

  run_ucontext_fork.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|pg --work DIR
Exit status: 0 passed, 1 failed.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLAGS = {"cyg": ["-finstrument-functions"], "fentry": ["-pg", "-mfentry"], "pg": ["-pg"]}
WANT = "forks 100, children failed 0\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--mode", required=True, choices=sorted(FLAGS))
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    exe = os.path.join(a.work, "ucontext_fork")
    subprocess.run([a.cc, "-O2", "-g", "-pthread", *FLAGS[a.mode],
                    os.path.join(ROOT, "tests", "programs", "ucontext_fork.c"), "-o", exe],
                   check=True)
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
    for p in problems:
        print("FAIL " + p)
    print("ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
