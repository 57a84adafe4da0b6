#!/usr/bin/env python3
"""vfork children that call instrumented functions before they _exit or exec
(tests/programs/vfork_child.c), with posix_spawn and system (clone(CLONE_VM|CLONE_VFORK)
inside glibc) beside them: the parent's calls must be recorded exactly, the children's not
at all (their calls between vfork and exec/_exit are not recorded: docs/runtime.md,
"Processes"), `callmon info` must show no lost events, no unmatched exits and every thread
finished, and the program's output and status must be as without callmon.

Before the fix the children's calls were recorded as the parent thread's (cleaf, cdeep
counted), and each child that _exited three calls deep left its frames on the parent's
shadow stack.

  run_vfork.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|pg|patch|xray --work DIR
Exit status: 0 passed, 1 failed.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

PARENT = ["pwork", "pleaf", "run_children", "wait_status", "main"]
CHILD = ["cleaf", "cdeep"]



def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "fentry", "pg", "patch", "xray"])
    exe = run_fixture.build_program(a, "vfork_child.c")
    problems = []
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=120, cwd=a.work)
    if plain.returncode != 0 or plain.stdout != "ok\n":
        problems.append(f"plain run: status {plain.returncode}, output {plain.stdout!r}")
        return run_fixture.report_problems(problems)
    data = os.path.join(a.work, "vfork.data")
    record = [a.callmon, "record"] + (["--patch=."] if a.mode == "patch" else [])
    rec = subprocess.run(record + ["-o", data, "--", exe], capture_output=True, text=True,
                         timeout=180, cwd=a.work)
    if (rec.returncode, rec.stdout) != (plain.returncode, plain.stdout):
        problems.append(f"under callmon status {rec.returncode}, output {rec.stdout!r} "
                        f"(without: {plain.returncode}, {plain.stdout!r}), "
                        f"stderr:\n{rec.stderr}")
        return run_fixture.report_problems(problems)
    own = run_fixture.program_counts(rec.stderr)
    expected = {"pwork": own["pwork"], "pleaf": own["pleaf"], "run_children": own["rounds"],
                "wait_status": 3 * own["rounds"], "main": 1, "cleaf": 0, "cdeep": 0}
    info = subprocess.run([a.callmon, "info", "-d", data, "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        problems.append(f"info status {info.returncode}: {info.stderr.strip()}")
        return run_fixture.report_problems(problems)
    for p in json.loads(info.stdout)["processes"]:
        for t in p["threads"]:
            for key in ("lost_events", "unmatched_exits"):
                if t.get(key, 0):
                    problems.append(f"process {p.get('pid')}: {key} {t[key]}")
            # (Only the program's own: under --patch=. the shell system() runs is patched
            # too, and it ends by _exit.)
            if p.get("exe", "").endswith("vfork_child") and t.get("status") != "finished":
                problems.append(f"process {p.get('pid')}: thread status {t.get('status')}")
    traced, err = run_fixture.recorded_counts(a.callmon, data)
    if err:
        problems.append(err)
        return run_fixture.report_problems(problems)
    for name, want in expected.items():
        if traced.get(name, 0) != want:
            problems.append(f"{name}: {traced.get(name, 0)} call(s) recorded, expected {want}")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
