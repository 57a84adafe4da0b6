#!/usr/bin/env python3
"""A program that chroots (tests/programs/chroot_thread.c), as a daemon confining itself
does, is recorded whole: the runtime opens its files through the recording directory pinned
before the chroot (docs/runtime.md, "Processes that change user"), where before the main
thread's recording stopped at its next chunk and new threads and children were not
recorded. Its thread, fork child and main loop are counted exactly; the program's output
and status are its own. With "close" the program closes every descriptor and opens a
directory of its own, which may take the pinned one's number: the recording's files must
not land there (that case records less; only its output and the directory are checked).
With "fsize" (-finstrument-functions only: a -pg build dies of SIGXFSZ by itself, writing
gmon.out past the limit) the program lowers its RLIMIT_FSIZE after the chroot below what a
new thread's event file needs: the file that could not get its header is removed through
the pinned directory (before: by its absolute path, which names nothing in the jail, and
the empty file stayed for every reader to warn about). With "setuid" the program becomes
nobody after the chroot (sshd's privilege separation): the recording is given to nobody
through the pinned directory and counted whole as in "plain" (before: by the directory's
path, which names nothing in the jail, so nobody could create the thread's and the child's
files). Needs root (chroot): exit 77 otherwise.

  run_chroot.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry --work DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

STEP_CALLS = 1 + 100000 + 1000 + 2000000


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "fentry"])
    if os.geteuid() != 0:
        print("skipped: chroot needs root")
        return 77
    exe = run_fixture.build_program(a, "chroot_thread.c", ["-pthread"])
    problems = []
    for case in ("plain", "setuid", "close", "fsize") if a.mode == "cyg" else \
            ("plain", "setuid", "close"):
        # A directory per run: a -pg build writes gmon.out into it by itself.
        jails = {}
        for run in ("without", "with"):
            jails[run] = os.path.join(a.work, f"jail.{case}.{run}")
            shutil.rmtree(jails[run], ignore_errors=True)
            os.makedirs(jails[run])
        more = [] if case == "plain" else [case]
        plain = subprocess.run([exe, jails["without"], *more], capture_output=True, text=True,
                               timeout=60)
        data = os.path.join(a.work, "rec." + case)
        rec = subprocess.run([a.callmon, "record", "-o", data, "--", exe, jails["with"], *more],
                             capture_output=True, text=True, timeout=120)
        jail = jails["with"]
        if rec.stdout != plain.stdout or rec.returncode != plain.returncode or \
                plain.returncode != 6:
            problems.append(f"{case}: under callmon status {rec.returncode}, output "
                            f"{rec.stdout!r}; without: {plain.returncode}, {plain.stdout!r}")
        if os.listdir(jail):  # under callmon, -pg's gmon.out is not written
            problems.append(f"{case}: files in the program's directory: {os.listdir(jail)}")
        if case == "fsize":
            empty = [n for n in os.listdir(data)
                     if n.endswith(".events") and os.path.getsize(os.path.join(data, n)) == 0]
            if empty:
                problems.append(f"fsize: empty thread files left: {empty}")
        if case not in ("plain", "setuid"):
            continue
        if rec.stderr:
            problems.append(f"{case}: callmon said: {rec.stderr[:300]!r}")
        rep = subprocess.run([a.callmon, "report", "-d", data, "--format=json"],
                             capture_output=True, text=True, timeout=60)
        calls = {f["name"]: f["calls"] for f in json.loads(rep.stdout)["functions"]} \
            if rep.returncode == 0 else {}
        if calls.get("step") != STEP_CALLS or calls.get("worker") != 1:
            problems.append(f"{case}: step {calls.get('step')} (want {STEP_CALLS}), worker "
                            f"{calls.get('worker')}")
        info = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                              timeout=60)
        if not re.search(r"problems:\s+none", info.stdout):
            problems.append(f"{case}: info: {info.stdout[-400:]}")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
