#!/usr/bin/env python3
"""Promise: a program that would run with privileges its user does not have (set-user-ID,
file capabilities) is refused before it runs, with the reason: the dynamic loader ignores
LD_PRELOAD for it, so nothing would be recorded (docs/security.md, "Privilege boundaries").
- root records a copy of fib that is set-user-ID nobody: refused, says "set-user-ID" and
  "LD_PRELOAD", and the program did not run (it used to run and record nothing);
- nobody records a copy with a file capability (setcap): refused, says "file capabilities";
- nobody records a plain copy: recorded (the check refuses only what it must).
Exit 0 passed, 1 failed, 77 skipped."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common

failures = []


def refused(r, words, what):
    if r.returncode == 0 or "fib(15)" in r.stdout:
        failures.append("%s: the program ran (status %d)" % (what, r.returncode))
    for word in words:
        if word not in r.stderr:
            failures.append("%s: the message does not say %r: %s" % (what, word, r.stderr.strip()))


def main():
    a = common.setup()
    common.need_second_user()
    if os.statvfs(a.work).f_flag & os.ST_NOSUID:
        common.skip(a.work + " is on a file system mounted nosuid")
    fib = common.build_fib(a.cc, a.work)
    os.chmod(fib, 0o755)

    suid = os.path.join(a.work, "suid-fib")
    shutil.copy(fib, suid)
    os.chown(suid, common.NOBODY, common.NOBODY)
    os.chmod(suid, 0o4755)
    r = common.run([a.callmon, "record", "-o", os.path.join(a.work, "suid.data"), "--", suid])
    print(r.stdout + r.stderr, end="")
    refused(r, ["set-user-ID", "LD_PRELOAD"], "set-user-ID program")

    if shutil.which("setcap") is None:
        print("note: setcap missing, file capabilities not tried")
    else:
        cap = os.path.join(a.work, "cap-fib")
        shutil.copy(fib, cap)
        os.chmod(cap, 0o755)
        if common.run(["setcap", "cap_net_raw+ep", cap]).returncode != 0:
            print("note: setcap refused here, file capabilities not tried")
        else:
            r = common.run(common.as_nobody(
                [a.callmon, "record", "-o", os.path.join(a.work, "cap.data"), "--", cap]))
            print(r.stdout + r.stderr, end="")
            refused(r, ["file capabilities", "LD_PRELOAD"], "program with file capabilities")

    r = common.run(common.as_nobody(
        [a.callmon, "record", "-o", os.path.join(a.work, "plain.data"), "--", fib]))
    if r.returncode != 0 or "fib(15)" not in r.stdout:
        failures.append("nobody could not record a plain program: " + r.stderr.strip())
    if failures:
        common.fail("; ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
