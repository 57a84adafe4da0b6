#!/usr/bin/env python3
"""The chrome export read as speedscope reads it: speedscope's Trace Event importer names
and keys a frame by the event's name followed by the JSON of its args, so every function
must give one key (one frame) however many calls it has, and exactly the functions `callmon
report --format=json` lists must appear. Exit 0 passed, 1 failed.

usage: export_chrome_frames.py CALLMON MAKE_TRACE TRACE WORK
"""
import json
import os
import shutil
import subprocess
import sys


def main():
    callmon, make_trace, trace, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rec = os.path.join(work, "rec.data")
    out = os.path.join(work, "out.json")
    subprocess.run([make_trace, trace, rec], check=True)
    subprocess.run([callmon, "export", "-d", rec, "--format=chrome", "-o", out], check=True)
    report = json.loads(subprocess.run([callmon, "report", "-d", rec, "--format=json"],
                                       check=True, capture_output=True, text=True).stdout)
    with open(out) as f:
        events = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    keys = {}
    for e in events:
        key = e["name"] + (" " + json.dumps(e["args"], separators=(",", ":")) if "args" in e else "")
        keys.setdefault(e["name"], set()).add(key)
    failed = False
    for name, ks in sorted(keys.items()):
        if len(ks) != 1:
            print(f"{name}: {len(ks)} speedscope frames, e.g. {sorted(ks)[:3]}")
            failed = True
    want = {f["name"] for f in report["functions"]}
    if set(keys) != want:
        print(f"functions: export {sorted(keys)}, report {sorted(want)}")
        failed = True
    if failed:
        return 1
    print(f"ok: {len(events)} calls, {len(keys)} frames")
    return 0


if __name__ == "__main__":
    sys.exit(main())
