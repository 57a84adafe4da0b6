#!/usr/bin/env python3
"""A signal handler that ends its thread with pthread_exit() while the signal interrupted
one of callmon's hooks in that thread (tests/programs/pthread_exit_in_handler.c): the calls
of the thread's cleanup handler, which run during pthread_exit's unwind, and every call of
the other threads and of the process's exit must be recorded exactly, `callmon info` must
show no problem and every thread but the victim finished, and the program's output and status must be as
without callmon, with no hang.

The interruption is forced, not left to a timer: TEST_CALLMON_HOOK_SIGNAL=SIGURG
(runtime/core/test_signal.hpp) sends the signal at the end of each chunk switch inside a
hook, and the chunks are made small so that one comes soon in every thread. The program
prints `self 1` if the victim thread had to raise the signal itself: that fails the test.

Before the fix the interrupted hook's busy count stayed on the victim's guard through the
unwind: the cleanup's 20 000 calls were written as nested records, and all but the first
chunk margin's worth lost.

  run_pthread_exit_handler.py --callmon build/bin/callmon --cc gcc \\
      --mode cyg|fentry|pg|patchable|patch|xray --work DIR [--runs N]
Exit status: 0 passed, 1 failed.
"""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

# Recorded exactly as the program counted them.
EXACT = ["hleaf", "cleaf", "owork", "oleaf", "mwork", "xleaf"]
# (Not `cleanup`: gcc inlines it into victim_main, where pthread_cleanup_push's code calls it.)
ONCE = ["main", "victim_main", "at_end"]
INTERRUPTED = ["vwork", "vleaf"]  # the abandoned hook's call may be recorded, not counted


def check_run(a, exe, data, plain, problems):
    env = dict(os.environ, TEST_CALLMON_HOOK_SIGNAL=str(int(signal.SIGURG)))
    record = [a.callmon, "record", "--chunk-size", "256"] + \
        (["--patch=."] if a.mode == "patch" else [])
    try:
        rec = subprocess.run(record + ["-o", data, "--", exe], capture_output=True,
                             text=True, timeout=180, cwd=a.work, env=env)
    except subprocess.TimeoutExpired:
        problems.append("under callmon: no end after 180 s (a hang)")
        return
    if (rec.returncode, rec.stdout) != (plain.returncode, plain.stdout):
        problems.append(f"under callmon status {rec.returncode}, output {rec.stdout!r} "
                        f"(without: {plain.returncode}, {plain.stdout!r}), "
                        f"stderr:\n{rec.stderr}")
        return
    own = run_fixture.program_counts(rec.stderr)
    if own.get("self") != 0 or own.get("handler_exits") != 1:
        problems.append(f"the victim's signal did not come from a hook (self "
                        f"{own.get('self')}, handler_exits {own.get('handler_exits')}): "
                        f"nothing was tested")
    # The victim ends with calls open (pthread_exit leaves its frames at END, as it does
    # without an interrupted hook: "unfinished"); every other thread finishes.
    if not run_fixture.check_recording(a.callmon, data, problems,
                                       statuses=["finished"] * 3 + ["unfinished"]):
        return
    traced, err = run_fixture.recorded_counts(a.callmon, data)
    if err:
        problems.append(err)
        return
    expected = {name: own.get(name) for name in EXACT}
    expected.update({name: 1 for name in ONCE})
    expected["other_main"] = 2
    expected["handler"] = own.get("other_hits", 0) + own.get("handler_exits", 0)
    run_fixture.check_counts(traced, expected, problems)
    run_fixture.check_counts(traced, {name: own.get(name, 0) for name in INTERRUPTED}, problems,
                             allowance=1)


def main():
    a = run_fixture.program_test_args(
        __doc__, ["cyg", "fentry", "pg", "patchable", "patch", "xray"],
        lambda ap: ap.add_argument("--runs", type=int, default=1))
    exe = run_fixture.build_program(a, "pthread_exit_in_handler.c", libs=["-pthread"])
    problems = []
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=120, cwd=a.work)
    if plain.returncode != 0 or plain.stdout != "ok\n":
        problems.append(f"plain run: status {plain.returncode}, output {plain.stdout!r}")
        return run_fixture.report_problems(problems)
    for run in range(a.runs):
        check_run(a, exe, os.path.join(a.work, f"run{run}.data"), plain, problems)
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
