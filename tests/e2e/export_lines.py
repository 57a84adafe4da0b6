#!/usr/bin/env python3
"""The callgrind export puts a call's cost on the line of the call.

Builds tests/programs/mutual.c with -g -finstrument-functions (-O0), records it, exports
callgrind and checks that main's calls of is_even and is_odd are costed on the lines that
make them (found in the source by their text), not on main's first line, and that
callgrind_annotate (when installed) shows each call under its source line.

Exit status: 0 passed, 1 failed, 77 skipped. Python stdlib only.
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(os.path.dirname(HERE), "programs")
SOURCE = os.path.join(PROGRAMS, "mutual.c")


def line_of(text):
    with open(SOURCE) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    raise SystemExit(f"'{text}' not in {SOURCE}")


def arcs(callgrind):
    """{(caller, callee): (call line, inclusive cost)} from a callgrind file, resolving the
    "(id) name" compression."""
    names, out = {}, {}
    fn = cfn = None
    pending = False

    def name(value):
        value = value.strip()
        if value.startswith("("):
            ident, _, rest = value.partition(")")
            ident += ")"
            if rest.strip():
                names[ident] = rest.strip()
            return names[ident]
        return value

    for line in callgrind.splitlines():
        if line.startswith("fn="):
            fn = name(line[3:])
        elif line.startswith("cfn="):
            cfn = name(line[4:])
        elif line.startswith("calls="):
            pending = True
        elif pending and line and line[0].isdigit():
            where, cost = line.split()
            out[(fn, cfn)] = (int(where), int(cost))
            pending = False
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    if not a.cc or a.cc.endswith("NOTFOUND") or not shutil.which(a.cc):
        print(f"skipped: no compiler {a.cc}")
        return 77
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    prog = os.path.join(a.work, "mutual")
    subprocess.run([a.cc, "-O0", "-g", "-finstrument-functions", "-I", PROGRAMS, SOURCE,
                    "-o", prog], check=True)
    data = os.path.join(a.work, "m.data")
    subprocess.run([a.callmon, "record", "-o", data, "--", prog], check=True,
                   stdout=subprocess.DEVNULL)
    out = os.path.join(a.work, "m.callgrind")
    subprocess.run([a.callmon, "export", "--format=callgrind", "-d", data, "-o", out],
                   check=True)
    with open(out) as f:
        got = arcs(f.read())
    want = {("main", "is_even"): line_of("int even = is_even(10);"),
            ("main", "is_odd"): line_of("int odd = is_odd(7);")}
    failed = False
    for arc, line in want.items():
        if arc not in got:
            print(f"FAIL: no arc {arc[0]} -> {arc[1]} in {out}")
            failed = True
        elif got[arc][0] != line:
            print(f"FAIL: {arc[0]} -> {arc[1]} costed on line {got[arc][0]}, the call is on "
                  f"line {line}")
            failed = True
    annotate = shutil.which("callgrind_annotate")
    if annotate and not failed:
        # --inclusive=yes: the calls' costs show on their lines in the annotated source.
        r = subprocess.run([annotate, "--inclusive=yes", "--auto=yes", out],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: callgrind_annotate: {r.stderr}")
            failed = True
        else:
            # The call's inclusive cost follows its source line as "COST => FILE:CALLEE".
            lines = r.stdout.splitlines()
            for arc, line in want.items():
                call = "int even = is_even(10);" if arc[1] == "is_even" else "int odd = is_odd(7);"
                at = [i for i, l in enumerate(lines) if l.rstrip().endswith(call)]
                ok = any(i + 1 < len(lines) and f":{arc[1]} (1x)" in lines[i + 1] and
                         "=>" in lines[i + 1] for i in at)
                if not ok:
                    print(f"FAIL: callgrind_annotate shows no call of {arc[1]} under "
                          f"'{call}':\n" + "\n".join(lines))
                    failed = True
    if failed:
        return 1
    print("ok: calls costed on their lines", {f"{k[0]}->{k[1]}": v for k, v in got.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
