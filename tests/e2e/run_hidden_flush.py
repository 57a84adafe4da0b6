#!/usr/bin/env python3
"""A thread whose calls are all kept out of the trace from some point on, still running when
the process ends (tests/programs/hidden_flush.c: 200 000 calls below `--max-depth=1`, or
each shorter than `--min-duration=100000`, then a loop without calls): the counts of its
unrecorded calls reach the recording, all but fewer than 65 536 (the runtime writes them
once they reach that many, docs/runtime.md, "Probes that record nothing"). Before, they
waited for the thread's next record, which never came: `info` showed 0 of them (leveldb's
compaction thread under --max-depth=4: 15.1 M calls in no count). Output and status as
without callmon.

  run_hidden_flush.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry --work DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

CALLS = 200000
FLUSH = 65536


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "fentry"])
    exe = run_fixture.build_program(a, "hidden_flush.c", ["-pthread"])
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    problems = []
    for name, args, field in (("depth", ["--max-depth=1"], "filtered_calls"),
                              ("duration", ["--min-duration=100000"], "taken_back_calls")):
        data = os.path.join(a.work, "rec." + name)
        rec = subprocess.run([a.callmon, "record", "-o", data, *args, "--", exe],
                             capture_output=True, text=True, timeout=120)
        if rec.stdout != plain.stdout or rec.returncode != plain.returncode:
            problems.append(f"{name}: status {rec.returncode}, output {rec.stdout!r}; without "
                            f"callmon {plain.returncode}, {plain.stdout!r}")
        info = subprocess.run([a.callmon, "info", "-d", data, "--format=json"],
                              capture_output=True, text=True, timeout=60)
        threads = [t for p in json.loads(info.stdout)["processes"] for t in p["threads"]] \
            if info.returncode == 0 else []
        unrecorded = max((t[field] for t in threads), default=None)
        if unrecorded is None or not CALLS - FLUSH < unrecorded <= CALLS:
            problems.append(f"{name}: the worker's {field}: {unrecorded} "
                            f"(want more than {CALLS - FLUSH}, at most {CALLS})")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
