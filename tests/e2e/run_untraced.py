#!/usr/bin/env python3
"""Threads whose recording cannot be set up (tests/programs/untraced_thread.c: every name of
their event file taken): they run untraced and the program is unchanged; callmon says so
once on stderr, not at every hook of theirs (it tried again at each: thousands of lines, a
server's workers slowed to a halt), and `info` names each thread the recording lacks
(`untraced` meta lines, docs/format.md). Main's calls are recorded exactly.

  run_untraced.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|pg --work DIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "fentry", "pg"])
    exe = run_fixture.build_program(a, "untraced_thread.c", ["-pthread"])
    problems = []
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    data = os.path.join(a.work, "rec")
    rec = subprocess.run([a.callmon, "record", "-o", data, "--", exe], capture_output=True,
                         text=True, timeout=120)
    if rec.stdout != plain.stdout or rec.returncode != plain.returncode:
        problems.append(f"under callmon: status {rec.returncode}, output {rec.stdout!r}; "
                        f"without: {plain.returncode}, {plain.stdout!r}")
    said = [l for l in rec.stderr.splitlines() if "untraced" in l]
    if len(said) != 1 or "cannot create its event file" not in said[0]:
        problems.append(f"{len(said)} diagnostic line(s) about untraced threads, not one: "
                        f"{rec.stderr[:400]!r}")
    rep = subprocess.run([a.callmon, "report", "-d", data, "--format=json"],
                         capture_output=True, text=True, timeout=60)
    calls = {f["name"]: f["calls"] for f in json.loads(rep.stdout)["functions"]} \
        if rep.returncode == 0 else {}
    if calls.get("rounds") != 1 or calls.get("step") != 1000:
        problems.append(f"main's calls: rounds {calls.get('rounds')}, step "
                        f"{calls.get('step')} (want 1 and 1000)")
    info = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                          timeout=60)
    lacking = [l for l in info.stdout.splitlines() if "was not recorded" in l]
    if len(lacking) != 2 or not all("cannot create its event file" in l for l in lacking):
        problems.append("info does not name the two untraced threads:\n" + info.stdout[-600:])
    return run_fixture.report_problems(problems)

if __name__ == "__main__":
    sys.exit(main())
