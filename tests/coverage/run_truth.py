#!/usr/bin/env python3
"""`callmon coverage` tells the truth about C++ (issue 22, item 5), on cov_shop.cpp:

- one source function is one row: the destructor's variants (D0 deleting, D1/D2) that
  demangle alike are one row `shop::Shape::~Shape()` with the calls of all of them (with
  -finstrument-functions the deleting variant is never called, the others are);
- nothing that ran is "never called": with -pg (no probe in inlined code) shop::helper's
  own copy is never entered but its body is inlined into main, which ran: it is listed as
  "inlined only, into main", is not a miss (--fail-under, --uncalled), while shop::never is;
- JSON says the same (status, variants, inlined_into, functions_inlined_only).

  run_truth.py --callmon CALLMON --cxx CXX --work DIR      Exit 0 passed, 1 failed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import check, summary  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def rows(cov, name):
    return [f for m in cov["modules"] for f in m["functions"] if f["name"] == name]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    w = a.work
    src = os.path.join(HERE, "cov_shop.cpp")

    # -finstrument-functions: the destructor's variants.
    subprocess.run([a.cxx, "-O2", "-g", "-finstrument-functions", "-o", "shop_cyg", src],
                   cwd=w, check=True)
    r = run([a.callmon, "record", "-o", "cyg.data", "--", "./shop_cyg"], w)
    check("record (-finstrument-functions)", r.returncode == 0, r.stderr)
    r = run([a.callmon, "coverage", "-d", "cyg.data", "--format", "json"], w)
    cov = json.loads(r.stdout)
    dtor = rows(cov, "shop::Shape::~Shape()")
    check("~Shape is one row", len(dtor) == 1, dtor)
    if dtor:
        check("~Shape: 5 calls, status called, several variants",
              dtor[0]["calls"] == 5 and dtor[0]["status"] == "called" and
              dtor[0]["variants"] >= 2, dtor[0])
    names = [f["name"] for m in cov["modules"] for f in m["functions"]]
    check("no function listed twice", len(names) == len(set(names)),
          sorted(n for n in names if names.count(n) > 1))
    r = run([a.callmon, "coverage", "-d", "cyg.data"], w)
    check("text: ~Shape not never called",
          not any("~Shape()" in l and "never called" in l for l in r.stdout.splitlines()),
          r.stdout)

    # -pg: inlined code has no probe.
    subprocess.run([a.cxx, "-O2", "-g", "-pg", "-o", "shop_pg", src], cwd=w, check=True)
    r = run([a.callmon, "record", "-o", "pg.data", "--", "./shop_pg"], w)
    check("record (-pg)", r.returncode == 0, r.stderr)
    r = run([a.callmon, "coverage", "-d", "pg.data", "--format", "json"], w)
    cov = json.loads(r.stdout)
    helper = rows(cov, "shop::helper(int)")
    never = rows(cov, "shop::never(int)")
    check("helper listed once, 0 calls, inlined only into main",
          len(helper) == 1 and helper[0]["calls"] == 0 and
          helper[0]["status"] == "inlined only" and helper[0]["inlined_into"] == "main", helper)
    check("never: never called", len(never) == 1 and never[0]["status"] == "never called", never)
    check("JSON counts the inlined-only function apart",
          cov.get("functions_inlined_only", 0) >= 1 and
          cov["functions_total"] == cov["functions_called"] + 1,
          {k: cov.get(k) for k in ("functions_total", "functions_called",
                                   "functions_inlined_only")})
    # Text shows short names (docs/report.md, "Names"): shop::helper, shop::never.
    r = run([a.callmon, "coverage", "-d", "pg.data"], w)
    line = [l for l in r.stdout.splitlines() if "shop::helper " in l]
    check("text: helper marked [inlined only, into main]",
          len(line) == 1 and "[inlined only, into main]" in line[0] and "never" not in line[0],
          r.stdout)
    r = run([a.callmon, "coverage", "-d", "pg.data", "--uncalled"], w)
    check("--uncalled lists never, not helper",
          "shop::never " in r.stdout and "shop::helper " not in r.stdout, r.stdout)
    # Every function but never() ran or may have run: --fail-under is about never() alone.
    pct = 100.0 * cov["functions_called"] / cov["functions_total"]
    r = run([a.callmon, "coverage", "-d", "pg.data", "--fail-under", f"{pct - 0.05:.2f}"], w)
    check("--fail-under just below the judged percentage passes", r.returncode == 0, r.stderr)

    return summary()


if __name__ == "__main__":
    sys.exit(main())
