#!/usr/bin/env python3
"""Runs a test's command and, when it passes, removes the work directory it was given.

Usage: clean_work.py COMMAND... --work DIR ...

The end-to-end, stress and attach tests each build their programs and keep their recordings
in a work directory (`--work DIR` among the command's arguments): about 3 GB for the whole
suite, twice over with the sanitizer tree, which once filled a CI machine's disk. A test that
passes needs none of it; one that fails or is skipped (exit status 77) keeps it to be read.
CALLMON_KEEP_WORK=1 in the environment keeps every work directory.

The exit status is the command's (a signal's death as 128 + its number).
"""
import os
import shutil
import subprocess
import sys


def work_dir(argv):
    """The value of the last `--work DIR` or `--work=DIR` of argv, or None."""
    found = None
    for i, arg in enumerate(argv):
        if arg == "--work" and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith("--work="):
            found = arg[len("--work="):]
    return found


def main():
    command = sys.argv[1:]
    if not command:
        print("clean_work.py: no command given", file=sys.stderr)
        return 2
    work = work_dir(command)
    if work is None:
        print("clean_work.py: the command has no --work DIR", file=sys.stderr)
        return 2
    status = subprocess.call(command)
    if status < 0:
        status = 128 - status
    if status == 0 and os.environ.get("CALLMON_KEEP_WORK") != "1":
        shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
