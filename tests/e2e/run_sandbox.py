#!/usr/bin/env python3
"""A program that confines itself with seccomp (tests/programs/sandbox.c), its filter
trapping or killing on the system calls the runtime's files need, put in by prctl or by
syscall(SYS_seccomp): under callmon its output and status must be as without it (it was
killed by SIGSYS at the runtime's next file window), `callmon info` must say where the
filter went in and that the recording stopped there, and `callmon report` must read what
was recorded (main once, work() hundreds of thousands of times: the calling thread's
chunk, filled before the filter went in). Requests the kernel refuses (feature probes)
install nothing, and the recording goes on whole.

  run_sandbox.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|patch --work DIR
Exit status: 0 passed, 1 failed.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

VARIANTS = [["trap", "prctl"], ["trap", "syscall"], ["kill", "prctl"], ["kill", "syscall"]]


def check_probe(a, exe, problems):
    """Requests the kernel refuses install nothing: the recording goes on whole (a probe
    sealed it: the thread and the fork child unrecorded, the main thread cut at 4 MiB)."""
    plain = subprocess.run([exe, "probe", "-"], capture_output=True, text=True, timeout=60)
    data = os.path.join(a.work, "probe.data")
    record = [a.callmon, "record", "-o", data] + (["--patch=."] if a.mode == "patch" else [])
    rec = subprocess.run(record + ["--", exe, "probe", "-"], capture_output=True, text=True,
                         timeout=120)
    if (rec.returncode, rec.stdout) != (plain.returncode, plain.stdout) or plain.returncode:
        problems.append(f"probe: status {rec.returncode} ({plain.returncode} without), "
                        f"{rec.stdout!r} ({plain.stdout!r})")
        return
    info = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                          timeout=60)
    if ("seccomp" in info.stdout or "processes: 2" not in info.stdout or
            "problems:  none" not in info.stdout):
        problems.append(f"probe: the recording did not go on whole:\n{info.stdout}")


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "fentry", "patch"])
    exe = run_fixture.build_program(a, "sandbox.c", extra=["-pthread"])
    problems = []
    for variant in VARIANTS:
        tag = " ".join(variant)
        # A -pg build writes gmon.out at its exit through openat, which "kill" forbids:
        # it is killed without callmon too.
        if a.mode == "fentry" and variant[0] == "kill":
            continue
        plain = subprocess.run([exe, *variant], capture_output=True, text=True, timeout=60,
                               cwd=a.work)
        if plain.returncode != 0 or not plain.stdout.startswith("sum "):
            problems.append(f"{tag}: without callmon: status {plain.returncode}, "
                            f"{plain.stdout!r} {plain.stderr!r}")
            continue
        data = os.path.join(a.work, "-".join(variant) + ".data")
        record = [a.callmon, "record", "-o", data] + (["--patch=."] if a.mode == "patch" else [])
        rec = subprocess.run(record + ["--", exe, *variant], capture_output=True, text=True,
                             timeout=120, cwd=a.work)
        if (rec.returncode, rec.stdout) != (plain.returncode, plain.stdout):
            problems.append(f"{tag}: under callmon status {rec.returncode}, output "
                            f"{rec.stdout!r} (without: {plain.stdout!r}), stderr {rec.stderr!r}")
            continue
        if "installs a seccomp filter" not in rec.stderr:
            problems.append(f"{tag}: callmon did not say the recording stops at the filter: "
                            f"{rec.stderr!r}")
        info = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                              timeout=60)
        if info.returncode != 0 or "seccomp filter installed at +" not in info.stdout:
            problems.append(f"{tag}: info (status {info.returncode}) does not say where the "
                            f"filter went in:\n{info.stdout}{info.stderr}")
        # The thread's chunk may hold all its calls; if it did not, the stop is the filter's.
        if "stopped early" in info.stdout and "had installed a seccomp filter" not in info.stdout:
            problems.append(f"{tag}: info does not say why the thread's recording stopped:\n"
                            f"{info.stdout}")
        if " lost while recording" in info.stdout:
            problems.append(f"{tag}: events lost (the fork child wrote into its parent's "
                            f"file header?):\n{info.stdout}")
        calls, err = run_fixture.recorded_counts(a.callmon, data)
        if err or calls.get("main") != 1 or calls.get("work", 0) < 100000:
            problems.append(f"{tag}: report: main {calls and calls.get('main')}, work "
                            f"{calls and calls.get('work')} (wanted 1 and over 100 000) "
                            f"{err or ''}")
    check_probe(a, exe, problems)
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
