#!/usr/bin/env python3
"""The callgrind export read back by valgrind's callgrind_annotate: its program total and
each function's self cost must equal `callmon report --format=json` (the sum of the self
times, and each function's self_ns). Exit 0 passed, 1 failed, 77 skipped (no
callgrind_annotate).

usage: export_callgrind_check.py CALLMON MAKE_TRACE TRACE WORK
"""
import json
import os
import re
import shutil
import subprocess
import sys


def main():
    callmon, make_trace, trace, work = sys.argv[1:5]
    annotate = shutil.which("callgrind_annotate")
    if not annotate:
        print("callgrind_annotate not found: skipped")
        return 77
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rec = os.path.join(work, "rec.data")
    out = os.path.join(work, "out.callgrind")
    subprocess.run([make_trace, trace, rec], check=True)
    subprocess.run([callmon, "export", "-d", rec, "--format=callgrind", "-o", out], check=True)
    report = json.loads(subprocess.run([callmon, "report", "-d", rec, "--format=json"],
                                       check=True, capture_output=True, text=True).stdout)
    text = subprocess.run([annotate, "--threshold=100", out], check=True, capture_output=True, text=True).stdout

    m = re.search(r"^\s*([\d,]+)\s.*PROGRAM TOTALS", text, re.M)
    if not m:
        print("no PROGRAM TOTALS line in:\n" + text)
        return 1
    total = int(m.group(1).replace(",", ""))
    want_total = sum(f["self_ns"] for f in report["functions"])
    failed = False
    if total != want_total:
        print(f"PROGRAM TOTALS {total}, report's self times add up to {want_total}")
        failed = True
    # Lines "  40 (33.33%)  ???:main": self cost per file:function.
    selfs = {}
    for line in text.splitlines():
        fm = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+\S*?:(.+)$", line)
        if fm:
            selfs[fm.group(2).strip()] = int(fm.group(1).replace(",", ""))
    for f in report["functions"]:
        if f["self_ns"] == 0:
            continue  # callgrind_annotate leaves out functions without cost
        got = selfs.get(f["name"])
        if got != f["self_ns"]:
            print(f"{f['name']}: callgrind_annotate self {got}, report self {f['self_ns']}")
            failed = True
    if not selfs:
        print("no function lines in:\n" + text)
        failed = True
    print(f"total {total}, {len(selfs)} functions checked")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
