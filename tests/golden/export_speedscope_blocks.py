#!/usr/bin/env python3
"""The speedscope export of a trace long enough to be written in many blocks (its writer
converts and writes events 256 at a time, report/export_speedscope.cpp), on a clock that is
not 1 GHz (fractional ns, ties) far from zero (time points of 14+ digits), in two threads
(the second begins while a block is half full): written with the sink on the walk's thread
and beside it (offload_sink.hpp's batch path), the two must be the same bytes; and every
call must be there, in order, against the chrome export of the same recording: the k-th
"C" event of a profile closes the k-th call chrome lists for that thread (both follow the
walk's order of finished calls), with the same name, its "O" at chrome's ts and its "C" at
ts + dur (to chrome's rounding, 1 ns). Exit 0 passed, 1 failed.

usage: export_speedscope_blocks.py CALLMON MAKE_TRACE WORK
"""
import json
import os
import random
import shutil
import subprocess
import sys


def make_trace(path):
    rng = random.Random(24)
    lines = ["process 300.0 pid 300 ppid 1 exe /bin/blocks clock 2394000123"]
    for i in range(40):
        lines.append(f"symbol {0x1000 + 16 * i:x} f{i}")
    for tid, calls in ((300, 1500), (301, 333)):
        lines.append(f"thread {tid}")
        t = 36_000_000_000_000 + tid
        depth, made = 0, 0
        while made < calls or depth > 0:
            t += rng.randint(1, 3000)
            if made < calls and (depth == 0 or (depth < 12 and rng.random() < 0.55)):
                lines.append(f"enter {t} f{rng.randrange(40)}")
                depth += 1
                made += 1
            else:
                lines.append(f"exit {t}")
                depth -= 1
        lines.append(f"end {t + 1}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return {300: 1500, 301: 333}


def export(callmon, rec, fmt, beside):
    env = dict(os.environ)
    if beside:
        env["CALLMON_PREFETCH_MIN_BYTES"] = "0"  # every thread beside the walk
    else:
        env["CALLMON_PREFETCH_MIN_BYTES"] = str(1 << 40)  # none
    return subprocess.run([callmon, "export", "-d", rec, f"--format={fmt}", "-o", "-"],
                          check=True, capture_output=True, env=env).stdout


def main():
    callmon, make, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    text = os.path.join(work, "blocks.txt")
    rec = os.path.join(work, "rec.data")
    calls = make_trace(text)
    subprocess.run([make, text, rec], check=True)
    direct = export(callmon, rec, "speedscope", False)
    beside = export(callmon, rec, "speedscope", True)
    failed = False
    if direct != beside:
        print("the speedscope export differs with the sink beside the walk")
        failed = True
    doc = json.loads(direct)
    chrome = [e for e in json.loads(export(callmon, rec, "chrome", False))["traceEvents"]
              if e["ph"] == "X"]
    frames = doc["shared"]["frames"]
    if len(doc["profiles"]) != len(calls):
        print(f"{len(doc['profiles'])} profiles, want {len(calls)}")
        return 1
    for profile in doc["profiles"]:
        tid = int(profile["name"].split()[1])  # "KEY TID [NAME]"
        want = [e for e in chrome if e["tid"] == tid]
        if len(want) != calls[tid]:
            print(f"thread {tid}: chrome has {len(want)} calls, the trace {calls[tid]}")
            failed = True
        stack, closed = [], 0
        for ev in profile["events"]:
            if ev["type"] == "O":
                stack.append(ev)
                continue
            if not stack or stack[-1]["frame"] != ev["frame"]:
                print(f"thread {tid}: C of frame {ev['frame']} does not close the open call")
                return 1
            opened = stack.pop()
            if closed >= len(want):
                print(f"thread {tid}: more calls than chrome's {len(want)}")
                return 1
            c = want[closed]
            closed += 1
            name = frames[ev["frame"]]["name"]
            if (name != c["name"] or abs(opened["at"] - c["ts"] * 1000) > 0.5001 or
                    abs(ev["at"] - (c["ts"] + c["dur"]) * 1000) > 1.0001):
                print(f"thread {tid}, call {closed}: {name} {opened['at']}..{ev['at']}, "
                      f"chrome {c['name']} ts {c['ts']} dur {c['dur']}")
                failed = True
        if stack or closed != len(want):
            print(f"thread {tid}: {len(stack)} calls left open, {closed} of {len(want)} closed")
            failed = True
        if profile["startValue"] != profile["events"][0]["at"] or \
                profile["endValue"] != profile["events"][-1]["at"]:
            print(f"thread {tid}: startValue/endValue are not the first and last events' times")
            failed = True
    if failed:
        return 1
    print(f"ok: {sum(calls.values())} calls in {len(calls)} profiles, "
          f"{len(direct)} bytes the same beside the walk")
    return 0


if __name__ == "__main__":
    sys.exit(main())
