#!/usr/bin/env python3
"""`callmon html` against `callmon report` on a real recording (tests/programs/fib.c built
with -finstrument-functions, so the meta file carries the measured probe cost): with
compensation on (the default) and with --no-compensation, every function's calls, total
and self time in the page's data must equal the report's, and compensation must lower
fib's times. Then on the golden traces whose figures are uncertain or hold scheduler time
(tests/traces: calibration, clocked, scheduler), every function's ranges (report's
total_ns_range/self_ns_range, present exactly where the figure is uncertain), offcpu_ns,
preempted_ns and clocked_calls must be the page's too, and the page must carry report's
notes. On all of them, and on suspended, coroutines and fork (pieces of calls), each
thread's time-ordered boxes (the page's "time order") must be calls (or pieces of calls) of
`callmon export --format=chrome` at the same place and length, every one when none was
merged. Exit 0 passed, 1 failed.

  html_vs_report.py CALLMON CC WORK MAKE_TRACE TRACE_DIR
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


# With pieces of calls: cut by coroutine switches, inherited at fork.
TRACES = ["calibration", "clocked", "scheduler", "suspended", "coroutines", "fork"]
# The page's optional function columns (docs/html.md), after name..self_ns.
# [label, module, file, line, calls, total, self, full name, then the optional columns]
FULL, TOTAL_RANGE, SELF_RANGE, OFFCPU, PREEMPTED, CLOCKED = 7, 8, 9, 10, 11, 12


def page_data(page_path):
    page = open(page_path, encoding="utf-8").read()
    blob = re.search(r'id="callmon-data" data-encoding="json">(.*?)</script>', page, re.S)
    return json.loads(blob.group(1))


def column(row, k, default):
    return row[k] if len(row) > k else default


def compare_timeline(callmon, data_dir, mode, label, work):
    """The page's time-ordered boxes against the chrome export's events; failures."""
    failed = 0
    run([callmon, "html", "--compress=never", "-d", data_dir, "-o", "timeline.html"] + mode, work)
    data = page_data(os.path.join(work, "timeline.html"))
    chrome = json.loads(run([callmon, "export", "--format=chrome", "-d", data_dir, "-o", "-"]
                            + mode, work))
    events = {}
    for e in chrome["traceEvents"]:
        if e["ph"] == "X":
            events.setdefault(e["tid"], []).append(
                (round(e["ts"] * 1000), round(e["dur"] * 1000), e["name"]))
    names = [f[0] for f in data["functions"]]
    for t in data.get("threads", []):
        calls = events.get(t["tid"], [])
        origin = min((c[0] for c in calls), default=0)
        have = set(calls)
        boxes = t["timeline"]
        # A box of one piece of a call (a continuation, an inherited frame: no call, count
        # 0) is an event of the chrome export as a whole call is (docs/html.md, "marks").
        m = t.get("marks", [])
        pieces = {m[i]: m[i + 2] for i in range(0, len(m), 3)}
        singles = 0
        for i in range(0, len(boxes), 6):
            start, dur, _, func, count, _ = boxes[i:i + 6]
            if pieces.get(i // 6, count) != 1:
                continue
            singles += 1
            found = any((origin + start + a, dur + b, names[func]) in have
                        for a in (-1, 0, 1) for b in (-1, 0, 1))
            if not found:
                failed += 1
                print(f"FAIL {label}: thread {t['tid']}: box {names[func]} at {start} for {dur} "
                      f"ns is no call of the chrome export")
                break
        if singles == len(boxes) // 6 and singles != len(calls):
            failed += 1
            print(f"FAIL {label}: thread {t['tid']}: {singles} boxes, {len(calls)} chrome calls")
    if not data.get("threads"):
        failed += 1
        print(f"FAIL {label}: no threads in the page")
    return failed


def compare_trace(callmon, make_trace, trace_dir, name, work):
    """The figures of one golden trace in html and report; the number of failures."""
    failed = 0
    run([make_trace, os.path.join(trace_dir, name + ".txt"), name + ".data"], work)
    report = json.loads(run([callmon, "report", "--format=json", "-d", name + ".data"], work))
    text = run([callmon, "report", "-d", name + ".data"], work)
    run([callmon, "html", "--compress=never", "-d", name + ".data", "-o", name + ".html"], work)
    data = page_data(os.path.join(work, name + ".html"))
    rows = {f[FULL]: f for f in data["functions"]}
    for f in report["functions"]:
        got = rows.get(f["name"])
        if not got:
            failed += 1
            print(f"FAIL {name}: {f['name']} missing from the page")
            continue
        want = [f["calls"], f["total_ns"], f["self_ns"], f.get("total_ns_range"),
                f.get("self_ns_range"), f["offcpu_ns"], f["preempted_ns"],
                f.get("clocked_calls", 0)]
        have = got[4:7] + [column(got, TOTAL_RANGE, None), column(got, SELF_RANGE, None),
                           column(got, OFFCPU, 0), column(got, PREEMPTED, 0),
                           column(got, CLOCKED, 0)]
        if have != want:
            failed += 1
            print(f"FAIL {name}: {f['name']}: html {have}, report {want}")
    failed += compare_timeline(callmon, name + ".data", [], name, work)
    notes = []  # a long note wraps onto lines that begin "#   "
    for line in text.splitlines():
        if line.startswith("# note: "):
            notes.append(line[len("# note: "):])
        elif line.startswith("#   ") and notes:
            notes[-1] += " " + line[len("#   "):]
    page_notes = [w[len("Note: "):] for w in data["summary"]["warnings"] if w.startswith("Note: ")]
    if notes != page_notes:
        failed += 1
        print(f"FAIL {name}: notes: html {page_notes}, report {notes}")
    return failed


def main():
    callmon, cc, work = os.path.abspath(sys.argv[1]), sys.argv[2], os.path.abspath(sys.argv[3])
    make_trace, trace_dir = os.path.abspath(sys.argv[4]), os.path.abspath(sys.argv[5])
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
        rows = {f[FULL]: f for f in data["functions"]}
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
        failed += compare_timeline(callmon, "rec", mode, "fib " + label, work)
    for name in TRACES:
        failed += compare_trace(callmon, make_trace, trace_dir, name, work)
    if not fib_total["compensated"] < fib_total["--no-compensation"]:
        failed += 1
        print(f"FAIL: compensation did not lower fib's total: {fib_total}")
    print(f"html vs report: {'FAILED' if failed else 'same figures'} ({fib_total})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
