#!/usr/bin/env python3
"""A signal handler that calls exit() or quick_exit() while the signal interrupted one of
callmon's hooks (tests/programs/exit_in_handler.c): the calls of the atexit (at_quick_exit)
handlers and static destructors that follow must be recorded exactly, `callmon info` must
show no lost events, and the program's output and status must be as without callmon.

The interruption is forced, not left to a timer: TEST_CALLMON_HOOK_SIGNAL=SIGURG
(runtime/core/test_signal.hpp) sends the signal at the end of the first chunk switch inside
a hook, and the chunks are made small so that one comes soon. The program prints `self 1`
if it had to raise the signal itself (the knob never fired): that fails the test.

Before the fix the hook's busy count stayed set through exit: the 300 000 exit-time calls
were written as nested records, which cannot switch chunks, and all but the first chunk's
worth were lost.

  run_exit_handler.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|pg|patch|xray \\
      --work DIR [--runs N]
Exit status: 0 passed, 1 failed.
"""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

VARIANTS = ["exit", "quick"]
EXACT = ["handler", "hleaf", "tail", "tleaf", "fleaf"]
INTERRUPTED = ["work", "leaf"]  # the abandoned hook's call may be recorded, not counted


def check_run(a, exe, variant, data, plain, problems):
    env = dict(os.environ, TEST_CALLMON_HOOK_SIGNAL=str(int(signal.SIGURG)))
    record = [a.callmon, "record", "--chunk-size", "256"] + \
        (["--patch=."] if a.mode == "patch" else [])
    rec = subprocess.run(record + ["-o", data, "--", exe, variant], capture_output=True,
                         text=True, timeout=180, cwd=a.work, env=env)
    if (rec.returncode, rec.stdout) != (plain.returncode, plain.stdout):
        problems.append(f"{variant}: under callmon status {rec.returncode}, output "
                        f"{rec.stdout!r} (without: {plain.returncode}, {plain.stdout!r}), "
                        f"stderr:\n{rec.stderr}")
        return
    own = run_fixture.program_counts(rec.stderr)
    if own.get("self") != 0:
        problems.append(f"{variant}: the signal did not come from a hook (self "
                        f"{own.get('self')}): nothing was tested")
    # At most one unmatched exit, which info lists as a problem: its list is not checked.
    if not run_fixture.check_recording(a.callmon, data, problems, f"{variant}: ", listed=False,
                                       unmatched_ok=1):
        return
    traced, err = run_fixture.recorded_counts(a.callmon, data)
    if err:
        problems.append(f"{variant}: {err}")
        return
    run_fixture.check_counts(traced, {name: own.get(name) for name in EXACT}, problems,
                             f"{variant}: ")
    run_fixture.check_counts(traced, {name: own.get(name, 0) for name in INTERRUPTED}, problems,
                             f"{variant}: ", allowance=1)


def main():
    a = run_fixture.program_test_args(
        __doc__, ["cyg", "fentry", "pg", "patch", "xray"],
        lambda ap: ap.add_argument("--runs", type=int, default=1))
    exe = run_fixture.build_program(a, "exit_in_handler.c")
    problems = []
    for variant in VARIANTS:
        plain = subprocess.run([exe, variant], capture_output=True, text=True, timeout=120,
                               cwd=a.work)
        if plain.returncode != 3 or plain.stdout != "ok\n":
            problems.append(f"{variant}: plain run: status {plain.returncode}, output "
                            f"{plain.stdout!r}")
            continue
        for run in range(a.runs):
            check_run(a, exe, variant, os.path.join(a.work, f"{variant}.{run}.data"), plain,
                      problems)
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
