"""What the run_*.py scripts of one C program share (run_untraced.py, run_fsize_limit.py):
their command line, building the program from tests/programs in a hook mode, and the exit
with the problems found."""
import argparse
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLAGS = {"cyg": ["-finstrument-functions"], "fentry": ["-pg", "-mfentry"], "pg": ["-pg"]}


def parse_args(doc, modes):
    """--callmon, --cc, --mode (one of `modes`), --work (made if missing)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--mode", required=True, choices=sorted(modes))
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    return a


def build(a, source):
    """tests/programs/`source` built -O2 -g -pthread in mode a.mode into WORK; its path."""
    exe = os.path.join(a.work, os.path.splitext(source)[0])
    programs = os.path.join(ROOT, "tests", "programs")
    subprocess.run([a.cc, "-O2", "-g", *FLAGS[a.mode], "-pthread", "-I", programs,
                    os.path.join(programs, source), "-o", exe], check=True)
    return exe


def finish(problems):
    """Prints each problem (or ok); the exit status."""
    for p in problems:
        print("FAIL " + p)
    if not problems:
        print("ok")
    return 1 if problems else 0
