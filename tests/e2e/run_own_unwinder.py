#!/usr/bin/env python3
"""Programs that unwind C++ exceptions with their own copy of the unwinder (-static-libgcc
-static-libstdc++) are never ended by callmon (docs/reliability.md, "A program's own
unwinder"). tests/programs/own_unwinder.cpp built by --cxx:

- -finstrument-functions, own unwinder: recorded, its library calls left out with one line
  on stderr, output and status as unrecorded (an exception thrown by qsort's comparator
  crossed a recorded library call: std::terminate before); its own calls recorded;
- the same linked dynamically: library calls recorded (qsort), no such line;
- -pg -mfentry and -fpatchable-function-entry=5, own unwinder, stripped too: refused before
  running (exit 2, one line naming the cause); with --allow-own-unwinder and no exception
  thrown, recorded;
- a C program linked -static-libgcc (no exception tables): recorded as any.

Exit status: 0 passed, 1 failed, 77 skipped (no compiler). Python stdlib only.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from checks import check, summary  # noqa: E402

SOURCE = os.path.join(os.path.dirname(HERE), "programs", "own_unwinder.cpp")
STATIC = ["-static-libgcc", "-static-libstdc++"]
C_SOURCE = r"""
#include <stdio.h>
__attribute__((noinline)) int twice(int x) { return 2 * x; }
int main(void) { printf("%d\n", twice(21)); return 0; }
"""


def run(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def build(compiler, work, name, flags, source=SOURCE):
    out = os.path.join(work, name)
    subprocess.run([compiler, "-O1", "-g", *flags, source, "-o", out], check=True)
    return out


def calls(callmon, data, work):
    """{function name: calls} of the recording, or None."""
    r = run([callmon, "report", "--format=json", "-d", data], work)
    if r.returncode != 0:
        return None
    return {f["name"].split("(")[0]: f["calls"] for f in json.loads(r.stdout)["functions"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--mode", default="cyg")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    if not os.path.exists(a.cxx):
        print(f"skipped: no compiler {a.cxx}")
        return 77
    os.makedirs(a.work, exist_ok=True)
    w = a.work
    note = "carries its own copy of the C++ unwinder"

    for name, flags, own in (("fi_own", ["-finstrument-functions", *STATIC], True),
                             ("fi_shared", ["-finstrument-functions"], False)):
        prog = build(a.cxx, w, name, flags)
        plain = run([prog, "throw"], w)
        data = os.path.join(w, name + ".data")
        rec = run([a.callmon, "record", "-o", data, "--", prog, "throw"], w)
        check(f"{name}: status and output as unrecorded",
              (rec.returncode, rec.stdout) == (plain.returncode, plain.stdout)
              and plain.returncode == 0, f"{plain.stdout!r} / {rec.stdout!r} {rec.stderr}")
        said = [line for line in rec.stderr.splitlines() if note in line]
        check(f"{name}: {'one line says library calls are left out' if own else 'nothing said'}",
              len(said) == (1 if own else 0) and
              (not own or "library calls are not recorded" in said[0]), rec.stderr)
        got = calls(a.callmon, data, w) or {}
        check(f"{name}: its own calls recorded (compare 5, inner 6)",
              got.get("compare") == 5 and got.get("inner") == 6, got)
        check(f"{name}: qsort {'not ' if own else ''}recorded as a library call",
              ("qsort" in got) != own, got)

    for name, flags, strip in (("fentry_own", ["-pg", "-mfentry"], False),
                               ("fentry_own_stripped", ["-pg", "-mfentry"], True),
                               ("sleds_own", ["-fpatchable-function-entry=5"], False)):
        prog = build(a.cxx, w, name, flags + STATIC)
        if strip:
            subprocess.run(["strip", prog], check=True)
        data = os.path.join(w, name + ".data")
        rec = run([a.callmon, "record", "-o", data, "--", prog, "throw"], w)
        lines = rec.stderr.strip().splitlines()
        check(f"{name}: refused, exit 2, one line, not run",
              rec.returncode == 2 and rec.stdout == "" and len(lines) == 1 and note in lines[0]
              and "--allow-own-unwinder" in lines[0], f"{rec.returncode} {rec.stdout!r} {rec.stderr}")
        if strip:
            continue
        rec = run([a.callmon, "record", "--allow-own-unwinder", "-o", data + "2", "--", prog], w)
        got = calls(a.callmon, data + "2", w) or {}
        check(f"{name} --allow-own-unwinder, nothing thrown: recorded",
              rec.returncode == 0 and rec.stdout == "compared 0 sum 21 caught 0\n" and
              got.get("middle") == 6, f"{rec.stdout!r} {rec.stderr} {got}")

    c_src = os.path.join(w, "plain_c.c")
    with open(c_src, "w") as f:
        f.write(C_SOURCE)
    cc = a.cxx[:-len("clang++")] + "clang" if a.cxx.endswith("clang++") else a.cxx.replace("g++", "gcc")
    prog = build(cc, w, "c_static_libgcc", ["-pg", "-mfentry", "-static-libgcc"], c_src)
    rec = run([a.callmon, "record", "-o", os.path.join(w, "c.data"), "--", prog], w)
    check("a C program linked -static-libgcc: recorded, nothing said",
          rec.returncode == 0 and rec.stdout == "42\n" and note not in rec.stderr, rec.stderr)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
