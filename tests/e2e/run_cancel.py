#!/usr/bin/env python3
"""Threads ended by glibc's forced unwind (pthread_exit, pthread_cancel) under callmon, with
library calls on (the default): tests/programs/cancel_cleanup.cpp prints each destructor
the unwind runs, and must print the same with and without callmon in every hook mode (the
runtime redirects glibc's own pointer to _Unwind_ForcedUnwind: interpose_unwind_link.cpp;
before, the unwind stopped at the first redirected return address and skipped the rest).
The recording shows the cancelled read closed by the unwind.

  run_cancel.py --callmon build/bin/callmon --cxx g++ --mode cyg|fentry|pg|patch --work DIR
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLAGS = {"cyg": ["-finstrument-functions"], "fentry": ["-pg", "-mfentry"], "pg": ["-pg"],
         "patch": []}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--mode", required=True, choices=sorted(FLAGS))
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    exe = os.path.join(a.work, "cancel_cleanup")
    subprocess.run([a.cxx, "-O1", "-g", *FLAGS[a.mode],
                    os.path.join(ROOT, "tests", "programs", "cancel_cleanup.cpp"),
                    "-o", exe, "-lpthread"], check=True)
    problems = []
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=60, cwd=a.work)
    want = ("~middle\n~exiter\n~blocked_reader\n~reader\nreader cancelled: yes\n"
            "~spinner\nspinner cancelled: yes\n")
    if plain.stdout != want or plain.returncode != 0:
        problems.append(f"plain run: status {plain.returncode}, output:\n{plain.stdout}")
    data = os.path.join(a.work, "cancel.data")
    record = [a.callmon, "record", "-o", data]
    if a.mode == "patch":
        record.append("--patch=.")
    rec = subprocess.run(record + ["--", exe], capture_output=True, text=True, timeout=120,
                         cwd=a.work)
    if rec.stdout != plain.stdout or rec.returncode != plain.returncode:
        problems.append(f"under callmon: status {rec.returncode}, output:\n{rec.stdout}"
                        f"without:\n{plain.stdout}stderr:\n{rec.stderr}")
    replay = subprocess.run([a.callmon, "replay", "-d", data], capture_output=True, text=True,
                            timeout=60)
    if not any("read(); [exception]" in line for line in replay.stdout.splitlines()):
        problems.append("replay: no read() closed by the cancellation's unwind:\n" +
                        "\n".join(replay.stdout.splitlines()[-30:]))
    for p in problems:
        print("FAIL " + p)
    if not problems:
        print("ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
