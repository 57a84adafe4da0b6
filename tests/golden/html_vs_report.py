#!/usr/bin/env python3
"""`callmon html` against `callmon report` on a real recording (tests/programs/fib.c built
with -finstrument-functions, so the meta file carries the measured probe cost): with
compensation on (the default) and with --no-compensation, every function's calls, total
and self time in the page's data must equal the report's, and compensation must lower
fib's times. Exit 0 passed, 1 failed.

  html_vs_report.py CALLMON CC WORK
"""
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(os.path.dirname(HERE), "programs")


def run(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout


def main():
    callmon, cc, work = os.path.abspath(sys.argv[1]), sys.argv[2], os.path.abspath(sys.argv[3])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    run([cc, "-O2", "-finstrument-functions", "-I", PROGRAMS, "-o", "fib",
         os.path.join(PROGRAMS, "fib.c")], work)
    subprocess.run([callmon, "record", "-o", "rec", "--", "./fib"], cwd=work, check=True,
                   capture_output=True)
    fib_total = {}
    failed = 0
    for mode in ([], ["--no-compensation"]):
        report = json.loads(run([callmon, "report", "--format=json", "-d", "rec"] + mode, work))
        run([callmon, "html", "--compress=never", "-d", "rec", "-o", "page.html"] + mode, work)
        page = open(os.path.join(work, "page.html"), encoding="utf-8").read()
        blob = re.search(r'id="callmon-data" data-encoding="json">(.*?)</script>', page, re.S)
        data = json.loads(blob.group(1))
        rows = {f[0]: f for f in data["functions"]}
        label = " ".join(mode) or "compensated"
        if data["summary"]["compensated"] != (not mode):
            failed += 1
            print(f"FAIL {label}: summary.compensated is {data['summary']['compensated']}")
        if data["summary"]["total_calls"] != report["total_calls"]:
            failed += 1
            print(f"FAIL {label}: total calls {data['summary']['total_calls']} != "
                  f"{report['total_calls']}")
        for f in report["functions"]:
            got = rows.get(f["name"])
            want = [f["calls"], f["total_ns"], f["self_ns"]]
            if not got or got[4:7] != want:
                failed += 1
                print(f"FAIL {label}: {f['name']}: html {got and got[4:7]}, report {want}")
        fib_total[label] = rows["fib"][5]
    if not fib_total["compensated"] < fib_total["--no-compensation"]:
        failed += 1
        print(f"FAIL: compensation did not lower fib's total: {fib_total}")
    print(f"html vs report: {'FAILED' if failed else 'same figures'} ({fib_total})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
