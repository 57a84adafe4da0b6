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
- a C program linked -static-libgcc (no exception tables): recorded as any;
- the runtime's own guard, where `record` does not read the program first: children of a
  recorded shell (-finstrument-functions, -pg -mfentry and sled builds with their own
  unwinder, one linked dynamically beside them, an uninstrumented one with its own
  unwinder) keep their output and status, each instrumented one with its own unwinder says
  in one line what it left out (the uninstrumented one loses nothing and says nothing), `info` shows it, and the dynamic one keeps its library
  calls; `trace` of the -pg -mfentry build; `record -p` of a running -fi build with its own
  unwinder (library calls left out, said) and of a -pg -mfentry one (refused, exit 2), both
  throwing all along and ending as unrecorded. Before the guard every one of them ended in
  std::terminate.

Exit status: 0 passed, 1 failed, 77 skipped (no compiler). Python stdlib only.
"""
import argparse
import json
import os
import subprocess
import sys
import time

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
    """{function name: calls} of the recording (summed over programs), or None."""
    r = run([callmon, "report", "--format=json", "-d", data], work)
    if r.returncode != 0:
        return None
    got = {}
    for f in json.loads(r.stdout)["functions"]:
        name = f["name"].split("(")[0]
        got[name] = got.get(name, 0) + f["calls"]
    return got


def children(a, w, note):
    """The runtime's guard: programs `record` did not read, and `trace`."""
    progs = {"fi_own": ["-finstrument-functions", *STATIC],
             "fentry_own": ["-pg", "-mfentry", *STATIC],
             "sleds_own": ["-fpatchable-function-entry=5", *STATIC],
             "fi_shared": ["-finstrument-functions"],
             "plain_own": STATIC}
    for name, flags in progs.items():
        build(a.cxx, w, "child_" + name, flags)
    script = "; ".join(f"./child_{name} throw" for name in progs)
    plain = run(["sh", "-c", script], w)
    data = os.path.join(w, "children.data")
    rec = run([a.callmon, "record", "-o", data, "--", "sh", "-c", script], w)
    check("children: status and output as unrecorded",
          (rec.returncode, rec.stdout) == (plain.returncode, plain.stdout) and
          plain.returncode == 0 and plain.stdout.count("caught 4") == 5,
          f"{plain.stdout!r} / {rec.stdout!r} {rec.stderr}")
    said = [line for line in rec.stderr.splitlines() if note in line]
    want = {"fi_own": "its library calls are not recorded",
            "fentry_own": "its library calls and -pg functions are not recorded",
            "sleds_own": "its library calls and nop-sled functions are not recorded"}
    check("children: one line each for the instrumented ones with their own unwinder (none "
          "for the uninstrumented one), saying what was left",
          len(said) == 3 and all(any(f"/child_{n} " in line and what in line for line in said)
                                 for n, what in want.items()), rec.stderr)
    got = calls(a.callmon, data, w) or {}
    check("children: -fi functions of both recorded, -pg and sled ones not, qsort of the "
          "dynamic one only", got.get("compare") == 10 and got.get("inner") == 12 and
          got.get("qsort") == 1, got)
    info = run([a.callmon, "info", "--format=json", "-d", data], w)
    left = [p.get("own_unwinder_left") for p in json.loads(info.stdout or "{}").get("processes", [])]
    check("children: info says what the guard left out",
          info.returncode == 0 and ["library-calls"] in left and left.count(None) >= 1,
          info.stdout[:2000])

    plain = run(["./child_fentry_own", "throw"], w)
    tr = run([a.callmon, "trace", "--", "./child_fentry_own", "throw"], w)
    check("trace of the -pg -mfentry build: status and output as unrecorded, said once",
          tr.returncode == 0 and plain.stdout in tr.stdout and
          sum(note in line for line in tr.stderr.splitlines()) == 1 and
          "its -pg functions are not recorded" in tr.stderr, f"{tr.returncode} {tr.stderr}")


def attach(a, w, note):
    """`record -p` of a program throwing all along."""
    for name, flags, refused in (("attach_fi_own", ["-finstrument-functions", *STATIC], False),
                                 ("attach_fentry_own", ["-pg", "-mfentry", *STATIC], True)):
        prog = build(a.cxx, w, name, flags)
        flag = os.path.join(w, name + ".go")
        if os.path.exists(flag):
            os.remove(flag)
        p = subprocess.Popen([prog, "throw", "wait", flag], cwd=w, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        data = os.path.join(w, name + ".data")
        rec = run([a.callmon, "record", "-p", str(p.pid), "--duration", "1", "-o", data], w)
        open(flag, "w").close()
        out, err = p.communicate(timeout=60)
        check(f"{name}: the program ends as unrecorded",
              p.returncode == 0 and out == "compared 5 sum 6 caught 4\n", f"{p.returncode} {out!r} {err}")
        lines = [line for line in rec.stderr.splitlines() if note in line]
        if refused:
            check(f"{name}: attach refused, exit 2, one line",
                  rec.returncode == 2 and len(lines) == 1 and "nothing was attached" in lines[0],
                  f"{rec.returncode} {rec.stderr}")
        else:
            got = calls(a.callmon, data, w) or {}
            check(f"{name}: attached, library calls left out and said, its functions recorded",
                  rec.returncode == 0 and len(lines) == 1 and "library calls" in lines[0] and
                  "qsort" not in got and got.get("inner", 0) > 0, f"{rec.stderr} {got}")


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

    children(a, w, note)
    attach(a, w, note)

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
