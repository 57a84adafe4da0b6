#!/usr/bin/env python3
"""ThreadSanitizer test of the runtime (docs/reliability.md): compiles tsan_threads.c with
-fsanitize=thread -finstrument-functions, records it with `callmon record` (optionally with
CALLMON_LIB naming a TSan-instrumented runtime), fails on any ThreadSanitizer report or a
non-zero exit, then checks in `callmon report --format=json` that every call was recorded:
leaf() once per loop iteration, round_of_threads() once per round."""
import argparse
import json
import os
import shutil
import subprocess
import sys

ROUNDS, NTHREADS, NCALLS = 3, 8, 2000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--runtime", help="libcallmon.so to preload instead of the default")
    a = ap.parse_args()

    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    prog = os.path.join(a.work, "tsan_threads")
    subprocess.run([a.cc, "-O1", "-g", "-fsanitize=thread", "-finstrument-functions",
                    "-o", prog, a.source, "-ldl", "-lpthread"], check=True)
    env = dict(os.environ)
    # exitcode: a report must fail the program even if it would otherwise exit 0.
    env["TSAN_OPTIONS"] = "halt_on_error=1:exitcode=66:report_signal_unsafe=1"
    env.pop("ASAN_OPTIONS", None)
    if a.runtime:
        env["CALLMON_LIB"] = a.runtime
    data = os.path.join(a.work, "tsan.data")
    r = subprocess.run([a.callmon, "record", "-o", data, "--", prog], env=env,
                       capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if "ThreadSanitizer" in r.stderr or r.returncode != 0:
        print(f"FAIL: status {r.returncode} or a ThreadSanitizer report")
        return 1
    rep = subprocess.run([a.callmon, "report", "-d", data, "--format=json"],
                         capture_output=True, text=True, check=True)
    calls = {f["name"]: f["calls"] for f in json.loads(rep.stdout)["functions"]}
    want = {"leaf": ROUNDS * NTHREADS * NCALLS, "round_of_threads": ROUNDS,
            "worker": ROUNDS * NTHREADS, "main": 1}
    bad = {k: (calls.get(k), v) for k, v in want.items() if calls.get(k) != v}
    if bad:
        print(f"FAIL: calls (got, want): {bad}")
        return 1
    info = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                          check=True)
    print(info.stdout)
    print("ok: no ThreadSanitizer report, every call recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
