#!/usr/bin/env python3
"""A thread whose calls are all kept out of the trace from some point on, still running when
the process ends (tests/programs/hidden_flush.c: 200 000 calls below `--max-depth=1`, or
each shorter than `--min-duration=100000`, then a loop without calls): the counts of its
unrecorded calls reach the recording, all but fewer than 1 024 (the runtime writes them
once they reach that many, docs/runtime.md, "Probes that record nothing"; with 65 536, 3 392
were lost here). Before, they
waited for the thread's next record, which never came: `info` showed 0 of them (leveldb's
compaction thread under --max-depth=4: 15.1 M calls in no count). And a process whose main
thread makes those calls and ends with `_exit` or `_Exit`: all 200 000 are counted (before,
those still pending when it ended were lost). Output and status as without callmon.

  run_hidden_flush.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry --work DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

CALLS = 200000
FLUSH = 1024  # kHiddenFlush, runtime/hooks/hooks.hpp


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "fentry"])
    exe = run_fixture.build_program(a, "hidden_flush.c", ["-pthread"])
    problems = []
    for name, args, field, how in (
            ("depth", ["--max-depth=1"], "filtered_calls", []),
            ("duration", ["--min-duration=100000"], "taken_back_calls", []),
            ("depth _exit", ["--max-depth=1"], "filtered_calls", ["_exit"]),
            ("duration _Exit", ["--min-duration=100000"], "taken_back_calls", ["_Exit"])):
        plain = subprocess.run([exe, *how], capture_output=True, text=True, timeout=60)
        data = os.path.join(a.work, "rec." + name.replace(" ", "."))
        rec = subprocess.run([a.callmon, "record", "-o", data, *args, "--", exe, *how],
                             capture_output=True, text=True, timeout=120)
        if rec.stdout != plain.stdout or rec.returncode != plain.returncode:
            problems.append(f"{name}: status {rec.returncode}, output {rec.stdout!r}; without "
                            f"callmon {plain.returncode}, {plain.stdout!r}")
        info = subprocess.run([a.callmon, "info", "-d", data, "--format=json"],
                              capture_output=True, text=True, timeout=60)
        threads = [t for p in json.loads(info.stdout)["processes"] for t in p["threads"]] \
            if info.returncode == 0 else []
        thread = max(threads, key=lambda t: t[field], default=None)
        # Its calls not counted as unrecorded were recorded: its own top function (worker,
        # main), and under the duration filter any call the scheduler kept past 100 us
        # (a loaded machine: 1-3 calls in most runs with three spinning processes).
        accounted = thread[field] + thread["calls"] - 1 if thread else None
        # A thread stopped by the end can lose fewer than FLUSH; one that ends it, none.
        # Their library calls count too: the worker's sem_post; main's strcmp, printf,
        # fflush and the end itself.
        low, high = (CALLS, CALLS + 8) if how else (CALLS - FLUSH + 1, CALLS + 1)
        if accounted is None or not low <= accounted <= high:
            problems.append(f"{name}: the {'main thread' if how else 'worker'}'s {field} and "
                            f"recorded calls but its own: {accounted} (want at least {low}, "
                            f"at most {high})")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
