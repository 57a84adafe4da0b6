#!/usr/bin/env python3
"""Promise: root can `callmon record -p` a process of another user (a service running as
its own user, the usual case for attaching), and nothing the attach writes lets that user
reach root's files (docs/security.md, "Attaching"):
- root attaches for a second to a loop of nobody's with `--exclude=^drop$`: the recording
  is made (the runtime, running as nobody, can write it: the directory is nobody's, still
  0700), the name filter was answered (the selection service trusts the attached process
  though it is no child of callmon and not root's), `drop` is absent, `keep` is there,
  `info` finds no problem, and the program ends with its own output and status;
- root's own files in that directory (the session file, written through a temporary beside
  it) are written without following links: links nobody put at both names while attached
  leave their target untouched (the file keeps its text; the attach warns and ends).
Exit 0 passed, 1 failed, 77 skipped."""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common

LOOP = r"""
#include <stdio.h>
#include <time.h>
#define NOINLINE __attribute__((noinline))
static volatile long sink;
NOINLINE void keep(long i) { sink += i; }
NOINLINE void drop(long i) { sink -= i; }
int main(int argc, char** argv) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long rounds = 0;
  do {
    for (int i = 0; i < 1000; ++i) { keep(i); drop(i); }
    ++rounds;
    struct timespec nap = {0, 1000000};
    nanosleep(&nap, 0);
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while (t.tv_sec - t0.tv_sec < 5);
  printf("rounds done %ld\n", rounds > 0 ? 1L : 0L);
  return 7;
}
"""

failures = []


def attach_once(a, prog, out_dir, plant=None):
    """Starts `prog` as nobody, attaches as root for a second with --exclude=^drop$ into
    `out_dir` (`plant(out_dir)` runs while it is attached), and returns (record result,
    program's stdout, program's status)."""
    victim = subprocess.Popen(common.as_nobody([prog]), stdout=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        rec = subprocess.Popen([a.callmon, "record", "-p", str(victim.pid), "--duration", "1.5",
                                "--exclude=^drop$", "-o", out_dir],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if plant:
            time.sleep(0.7)
            plant(out_dir, rec.pid)
        out, err = rec.communicate(timeout=60)
        stdout, _ = victim.communicate(timeout=60)
        return subprocess.CompletedProcess(rec.args, rec.returncode, out, err), stdout, \
            victim.returncode
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait()


def main():
    a = common.setup()
    common.need_second_user()
    prog = common.build_source(a.cc, a.work, "loop", LOOP)
    os.chmod(prog, 0o755)

    rec_dir = os.path.join(a.work, "rec")
    rec, stdout, status = attach_once(a, prog, rec_dir)
    print(rec.stdout + rec.stderr, end="")
    if rec.returncode != 0:
        common.fail("root could not record a process of nobody's: " + rec.stderr.strip())
    if stdout != "rounds done 1\n" or status != 7:
        failures.append("the program's output or status changed: %r, %d" % (stdout, status))
    st = os.stat(rec_dir)
    if st.st_uid != common.NOBODY or st.st_mode & 0o077:
        failures.append("the directory is user %d mode %o, not nobody's and private"
                        % (st.st_uid, st.st_mode & 0o777))
    rep = common.run([a.callmon, "report", "-d", rec_dir, "--format=json"])
    names = {f["name"]: f["calls"] for f in json.loads(rep.stdout)["functions"]} \
        if rep.returncode == 0 else {}
    if not names.get("keep"):
        failures.append("keep was not recorded: %s" % (rep.stderr.strip() or names))
    if "drop" in names:
        failures.append("drop was recorded %d times: the name filter was not answered"
                        % names["drop"])
    info = common.run([a.callmon, "info", "-d", rec_dir])
    if not re.search(r"problems:\s+none", info.stdout):
        failures.append("info: " + info.stdout[-400:])

    # Links where root's session file is written at the detach (through a temporary beside
    # it, named by callmon's process id), put there by nobody while attached.
    target = os.path.join(a.work, "roots_file")
    with open(target, "w") as f:
        f.write("root's text\n")
    os.chmod(target, 0o644)

    def plant(out_dir, callmon_pid):
        for name in ("session.json.tmp.%d" % callmon_pid, "session.json"):
            common.run(common.as_nobody(["ln", "-sf", target, os.path.join(out_dir, name)]))

    rec, stdout, status = attach_once(a, prog, os.path.join(a.work, "rec2"), plant)
    print(rec.stdout + rec.stderr, end="")
    with open(target) as f:
        if f.read() != "root's text\n":
            failures.append("root wrote through a link nobody planted in the recording")
    if stdout != "rounds done 1\n" or status != 7:
        failures.append("the second program's output or status changed: %r, %d"
                        % (stdout, status))
    if failures:
        common.fail("; ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
