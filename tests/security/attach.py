#!/usr/bin/env python3
"""Promise: `callmon monitor -p` attaches to no more than ptrace allows its user, and says
which rule refused, naming kernel.yama.ptrace_scope (docs/security.md, "Attaching").
- nobody attaching to a process of root's: refused, the message says whose process it is
  and names kernel.yama.ptrace_scope, and the process runs on untouched;
- nobody attaching to its own process: allowed when kernel.yama.ptrace_scope is 0 or Yama
  is off; refused with the scope's explanation when it is 1 or more.
Exit 0 passed, 1 failed, 77 skipped."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common

failures = []


def yama_scope():
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as f:
            return int(f.read())
    except OSError:
        return None


def main():
    a = common.setup()
    common.need_second_user()
    victim = subprocess.Popen(["sleep", "30"])
    try:
        r = common.run(common.as_nobody(
            [a.callmon, "monitor", "-p", str(victim.pid), "--duration", "0.5"]))
        print(r.stdout + r.stderr, end="")
        if r.returncode == 0:
            failures.append("nobody attached to a process of root's")
        for word in ["kernel.yama.ptrace_scope", "belongs to user 0"]:
            if word not in r.stderr:
                failures.append("the refusal does not say %r" % word)
        if victim.poll() is not None:
            failures.append("root's process did not survive the attempt")
    finally:
        victim.kill()
        victim.wait()

    # The shell's child is not callmon's: under ptrace_scope 1 only an ancestor may attach.
    script = "sleep 5 & %s monitor -p $! --duration 0.3; s=$?; kill $!; exit $s" % a.callmon
    r = common.run(common.as_nobody(["sh", "-c", script]))
    print(r.stdout + r.stderr, end="")
    scope = yama_scope()
    if scope in (None, 0):
        if r.returncode != 0:
            failures.append("nobody could not attach to its own process: " + r.stderr.strip())
    elif r.returncode == 0 or ("kernel.yama.ptrace_scope is %d" % scope) not in r.stderr:
        failures.append("under ptrace_scope %d the refusal was not explained: %s"
                        % (scope, r.stderr.strip()))
    if failures:
        common.fail("; ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
