#!/usr/bin/env python3
"""Checks clean_work.py: a passing command's --work directory goes, a failing or skipped
one's stays (with its files), CALLMON_KEEP_WORK=1 keeps it, and the exit status is the
command's."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CLEAN = os.path.join(HERE, "clean_work.py")


def run(status, env_extra=None, form="separate"):
    """Runs a command exiting with STATUS under clean_work.py; returns (status, kept)."""
    top = tempfile.mkdtemp(prefix="clean_work_test.")
    work = os.path.join(top, "work")
    os.makedirs(work)
    with open(os.path.join(work, "recording"), "w") as f:
        f.write("data")
    work_args = ["--work", work] if form == "separate" else ["--work=" + work]
    command = [sys.executable, CLEAN, sys.executable, "-c",
               f"import sys; sys.exit({status})"] + work_args
    env = dict(os.environ)
    env.pop("CALLMON_KEEP_WORK", None)
    env.update(env_extra or {})
    got = subprocess.call(command, env=env)
    kept = os.path.exists(os.path.join(work, "recording"))
    subprocess.call(["rm", "-rf", top])
    return got, kept


def main():
    failures = []
    cases = [
        ("passed", run(0), (0, False)),
        ("passed, --work=DIR", run(0, form="joined"), (0, False)),
        ("failed", run(1), (1, True)),
        ("skipped", run(77), (77, True)),
        ("kept by CALLMON_KEEP_WORK", run(0, {"CALLMON_KEEP_WORK": "1"}), (0, True)),
    ]
    for name, got, want in cases:
        if got != want:
            failures.append(f"{name}: (status, kept) {got}, expected {want}")
    no_work = subprocess.call([sys.executable, CLEAN, "true"], stderr=subprocess.DEVNULL)
    if no_work != 2:
        failures.append(f"a command without --work: status {no_work}, expected 2")
    for failure in failures:
        print("FAIL:", failure)
    print("clean_work:", "ok" if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
