"""Shared by run_trace.py and run_inject.py: building a fixture of tests/programs in a hook
mode, running a command with a timeout, and collecting failed checks. Python stdlib only."""
import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(os.path.dirname(HERE), "programs")
MODE_FLAGS = {"cyg": ["-finstrument-functions"], "pg": ["-pg"], "fentry": ["-pg", "-mfentry"],
              "patchable": ["-fpatchable-function-entry=5"],
              "xray": ["-fxray-instrument", "-fxray-instruction-threshold=1"],
              "patch": []}  # no flag: the tool gets --patch=. (run_trace.py)
TIMEOUT = 60


class Failures:
    def __init__(self):
        self.items = []

    def check(self, what, expected, got):
        if expected != got:
            self.items.append(what)
            print(f"FAIL: {what}\n  expected: {expected!r}\n  got:      {got!r}\n", flush=True)

    def check_true(self, what, ok, detail=""):
        if not ok:
            self.items.append(what)
            print(f"FAIL: {what}\n  {detail}\n", flush=True)

    def finish(self):
        if self.items:
            print(f"{len(self.items)} check(s) failed")
            return 1
        print("PASS")
        return 0


def build(args, source, out):
    """Compiles tests/programs/<source> with args.cc/args.cxx in args.mode at args.opt."""
    cxx = source.endswith(".cpp")
    cmd = [args.cxx if cxx else args.cc, f"-{args.opt}", "-g", "-Wall", "-I", PROGRAMS]
    cmd += MODE_FLAGS[args.mode] + ["-pthread", "-o", out, os.path.join(PROGRAMS, source)]
    if cxx and args.compiler == "clang":
        cmd.append("-lstdc++")
    subprocess.run(cmd, check=True)
    return out


def run(cmd, cwd, env=None):
    """Runs cmd; a timeout becomes status None with a note on stderr."""
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace",
                              timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, None, str(e.stdout or ""),
                                           str(e.stderr or "") + "\n[timed out]")


def add_common_args(ap):
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--compiler", required=True, choices=["gcc", "clang"])
    ap.add_argument("--cc", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--opt", required=True, choices=["O0", "O2"])
    ap.add_argument("--mode", required=True, choices=sorted(MODE_FLAGS))
    ap.add_argument("--work", required=True)
