#!/usr/bin/env python3
"""Boost.Context fibers under callmon (tests/programs/boost_fiber.cpp): the program's output
and status as without callmon, every call of leaf, step and body counted once (a resumed
call is a continuation, not a new call), each function's average between its min and max
(of whole calls, their pieces summed), no problem in `info`. Before callmon interposed
jump_fcontext/ontop_fcontext, the modes that redirect return addresses killed it (SIGSEGV).

  run_boost_fiber.py --callmon build/bin/callmon --cc g++|clang++ --mode MODE --work DIR
                     [--attach]
--attach: `callmon record -p` attaches to it while main waits (main's frame open), main
then resumes a fiber first, the fibers switch for a while and the detach comes; the output
and status must be as without callmon, `info` without problems.
Exit status: 0 passed, 1 failed, 77 skipped (no Boost.Context headers: libboost-context-dev).
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (MODE_FLAGS, MODE_RECORD_ARGS, program_test_args, ...)

WANT_COUNTS = {"leaf": 40001, "step": 20001, "body": 2}


def attach_problems(a, exe):
    """The program waits in main (argv[2], a flag file) until the attach is done, so that
    the attach finds main's own frame open and the first thing the program does after it
    is a switch into a fiber; then it switches for the rest of the attach and the detach
    comes while it switches."""
    rounds = "30000000"
    plain = subprocess.run([exe, rounds], capture_output=True, text=True, timeout=300)
    flag = os.path.join(a.work, "flag")
    with open(flag, "wb") as f:
        f.write(b"\0")
    p = subprocess.Popen([exe, rounds, flag], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    problems = []
    if p.stderr.readline() != "waiting\n":
        p.kill()
        return [f"the program did not wait: {p.communicate()}"]
    data = os.path.join(a.work, "attach.data")
    extra = ["--patch=."] if a.mode == "patch" else []
    att = subprocess.Popen([a.callmon, "record", "-p", str(p.pid), "-o", data, "--duration",
                            "0.5", *extra], stderr=subprocess.PIPE, text=True)
    inherited = ""
    for line in att.stderr:  # the attach is done once its frames are said
        if "open at the attach" in line or "not unwound" in line or "could not" in line:
            inherited = line
            break
    with open(flag, "r+b") as f:  # let main go on: its next call resumes a fiber
        f.write(b"\1")
    att_err = inherited + att.stderr.read()
    att.wait(timeout=300)
    out, err = p.communicate(timeout=300)
    if att.returncode != 0 or "detached" not in att_err:
        problems.append(f"attach: status {att.returncode}, {att_err[-500:]!r}")
    # main's frame (the -pg/sled/--patch modes hook main) was found open and inherited.
    if a.mode != "cyg" and "1 frame(s) open at the attach recorded as inherited" not in inherited:
        problems.append(f"the attach did not find main alone open: {inherited!r}")
    if (p.returncode, out) != (plain.returncode, plain.stdout) or plain.returncode:
        problems.append(f"attached to: status {p.returncode}, output {out!r}, stderr "
                        f"{err[-300:]!r}; without: {plain.returncode}, {plain.stdout!r}")
    info = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                          timeout=120)
    if info.returncode != 0 or "problems:  none" not in info.stdout:
        problems.append(f"info: {info.stdout[-600:]} {info.stderr[-300:]}")
    return problems


def main():
    a = run_fixture.program_test_args(
        __doc__, ["cyg", "pg", "fentry", "patchable", "xray", "patch"],
        lambda ap: ap.add_argument("--attach", action="store_true"))
    if not os.path.exists("/usr/include/boost/context/fiber.hpp"):
        print("SKIP: no Boost.Context headers (libboost-context-dev)")
        return run_fixture.SKIP
    exe = run_fixture.build_program(a, "boost_fiber.cpp", libs=["-lboost_context"])
    if a.attach:
        return run_fixture.report_problems(attach_problems(a, exe))
    problems = []
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    data = os.path.join(a.work, "fiber.data")
    rec = subprocess.run([a.callmon, "record", "-o", data,
                          *run_fixture.MODE_RECORD_ARGS.get(a.mode, []), "--", exe],
                         capture_output=True, text=True, timeout=300)
    if (rec.returncode, rec.stdout) != (plain.returncode, plain.stdout) or plain.returncode:
        problems.append(f"under callmon: status {rec.returncode}, output {rec.stdout!r}; "
                        f"without: {plain.returncode}, {plain.stdout!r}; "
                        f"stderr {rec.stderr[-500:]!r}")
        return run_fixture.report_problems(problems)
    r = subprocess.run([a.callmon, "report", "--format=json", "-d", data], capture_output=True,
                       text=True, timeout=120)
    got = {}
    if r.returncode == 0:
        for f in json.loads(r.stdout)["functions"]:
            if f["short_name"] in WANT_COUNTS:
                got[f["short_name"]] = got.get(f["short_name"], 0) + f["calls"]
            # Min and max are of whole calls, every piece joined to its call (the two fibers
            # are suspended in the same functions: resumed in the order suspended), so the
            # average lies between them (before: first pieces only, body's max far below).
            lo, avg, hi = f["min_ns"], f["avg_ns"], f["max_ns"]
            if not lo - 1 <= avg <= hi + 1:
                problems.append(f"{f['short_name']}: avg {avg} ns outside min {lo} .. max {hi}")
    if got != WANT_COUNTS:
        problems.append(f"counts {got}, expected {WANT_COUNTS} ({r.stderr.strip()})")
    info = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                          timeout=120)
    if info.returncode != 0 or "problems:  none" not in info.stdout:
        problems.append(f"info: {info.stdout[-600:]}")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
