#!/usr/bin/env python3
"""Signal handlers that leave by siglongjmp while they interrupted callmon's hooks
(tests/programs/sigjmp_count.c), on an alternate signal stack and without, and with jumps
that stay inside the handler: under callmon the program's output and status must be as
without it, `callmon info` must show no lost events, and the calls `callmon report
--format=json` counts must be the program's own counts: exact for the handler's functions
and the calls after the storm, within one per jump for the functions the jumps abandon
(a call entered and left before it counted itself).

Before the fix the interrupted hook's busy count on the thread's guard stayed after the
jump: every later hook wrote nested records until their margin was gone, then counted them
lost (millions of events; handler and leaf counts a few percent of the program's).
The program's view of its own handlers must not change (tests/programs/sigaction_view.c).

  run_sigjmp.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|pg|patch|xray \\
      --work DIR [--runs N]
Exit status: 0 passed, 1 failed.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

VARIANTS = [["alt"], ["noalt"], ["alt", "inside"], ["noalt", "inside"]]
EXACT = ["handler", "hleaf", "hdeep", "tail", "tleaf"]
ABANDONED = ["deep", "leaf"]



def check_run(a, exe, variant, data, plain_out, problems):
    tag = " ".join(variant)
    record = [a.callmon, "record"] + (["--patch=."] if a.mode == "patch" else [])
    rec = subprocess.run(record + ["-o", data, "--", exe, *variant], capture_output=True,
                         text=True, timeout=180, cwd=a.work)
    if rec.returncode != 0 or rec.stdout != plain_out:
        problems.append(f"{tag}: under callmon status {rec.returncode}, output {rec.stdout!r} "
                        f"(without: {plain_out!r}), stderr:\n{rec.stderr}")
        return
    own = run_fixture.program_counts(rec.stderr)
    info = subprocess.run([a.callmon, "info", "-d", data, "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        problems.append(f"{tag}: info status {info.returncode}: {info.stderr.strip()}")
        return
    lost = sum(t.get("lost_events", 0) for p in json.loads(info.stdout)["processes"]
               for t in p["threads"])
    if lost:
        problems.append(f"{tag}: {lost} event(s) lost")
    traced, err = run_fixture.recorded_counts(a.callmon, data)
    if err:
        problems.append(f"{tag}: {err}")
        return
    names = EXACT if "inside" in variant else [n for n in EXACT if n != "hdeep"]
    for name in names:
        if traced.get(name, 0) != own.get(name):
            problems.append(f"{tag}: {name}: {traced.get(name, 0)} call(s) recorded, "
                            f"the program made {own.get(name)}")
    for name in ABANDONED:
        diff = traced.get(name, 0) - own.get(name, 0)
        if not 0 <= diff <= own.get("jumps", 0):
            problems.append(f"{tag}: {name}: {traced.get(name, 0)} call(s) recorded, the "
                            f"program made {own.get(name)} ({own.get('jumps')} jumps)")


def check_view(a, problems):
    """The program's view of its own handlers (tests/programs/sigaction_view.c): the old
    actions sigaction and signal return, SA_SIGINFO, SA_RESETHAND, SA_NODEFER, the mask."""
    exe = run_fixture.build_program(a, "sigaction_view.c")
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=60, cwd=a.work)
    record = [a.callmon, "record"] + (["--patch=."] if a.mode == "patch" else [])
    rec = subprocess.run(record + ["-o", os.path.join(a.work, "view.data"), "--", exe],
                         capture_output=True, text=True, timeout=60, cwd=a.work)
    if (rec.returncode, rec.stdout) != (plain.returncode, plain.stdout):
        problems.append(f"sigaction_view: status {rec.returncode} under callmon "
                        f"({plain.returncode} without), output:\n{rec.stdout}without:\n"
                        f"{plain.stdout}")


def main():
    a = run_fixture.program_test_args(
        __doc__, ["cyg", "fentry", "pg", "patch", "xray"],
        lambda ap: ap.add_argument("--runs", type=int, default=1))
    exe = run_fixture.build_program(a, "sigjmp_count.c")
    problems = []
    check_view(a, problems)
    for variant in VARIANTS:
        plain = subprocess.run([exe, *variant], capture_output=True, text=True, timeout=120,
                               cwd=a.work)
        if plain.returncode != 0 or plain.stdout != "ok\n":
            problems.append(f"{' '.join(variant)}: plain run: status {plain.returncode}, "
                            f"output {plain.stdout!r}")
            continue
        for run in range(a.runs):
            data = os.path.join(a.work, f"{'_'.join(variant)}.{run}.data")
            check_run(a, exe, variant, data, plain.stdout, problems)
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
