#!/usr/bin/env python3
"""Promise: a program root records that becomes another user (a daemon dropping
privileges) is recorded whole, and its recording stays as private as any (docs/runtime.md,
"Processes that change user"; docs/security.md, "What its files reveal"):
- root records a program that calls setuid (also: setresuid; seteuid, which keeps root as
  the real user) to become nobody, then starts a thread, forks a child and makes enough
  calls to fill several chunks: every call is counted (before: the main thread's recording
  stopped at its next chunk, "Permission denied", and the thread and the child were not
  recorded at all), `info` finds no problem, callmon prints no diagnostic, the program's
  output and status are its own;
- the directory and the files are nobody's (whose processes write them) or root's, and no
  more readable than before: 0700 and 0600;
- a root program whose vfork child becomes nobody and execs an instrumented image: the
  parent's files stay root's, the image's are nobody's, both recorded whole (before: the
  child's setuid gave every file of the parent's to nobody);
- a server that switches its file-system user for each request (setfsuid to the client's
  user and back to root, 300 times, its recording switching chunks meanwhile) is recorded
  whole, and its files are given to that user once, not at every switch (before: the
  directory scanned and each file chowned 300 times, 600 fchownat calls, counted by the
  program's own fchownat, which the runtime's calls reach).
Exit 0 passed, 1 failed, 77 skipped."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common

PROGRAM = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define NOINLINE __attribute__((noinline))
static volatile long sink;
NOINLINE long work(long n) { sink += n; return n * 2; }
NOINLINE void* worker(void* arg) {
  long s = 0;
  for (long i = 0; i < 50000; ++i) s += work(i & 7);
  return (void*)s;
}
int main(int argc, char** argv) {
  work(1);
  const char* how = argv[1];
  if (!strcmp(how, "exec_child")) {
    for (long i = 0; i < 50000; ++i) work(1);
    return 5;
  }
  if (!strcmp(how, "vfork")) {
    pid_t c = vfork();
    if (c == 0) {
      if (setgid(65534) | setuid(65534)) _exit(1);
      execl("/proc/self/exe", argv[0], "exec_child", (char*)0);
      _exit(127);
    }
    int st = 0;
    waitpid(c, &st, 0);
    long s = 0;
    for (long i = 0; i < 200000; ++i) s += work(3);
    printf("user %d sum %ld child %d\n", (int)geteuid(), s, WEXITSTATUS(st));
    return 4;
  }
  int r = !strcmp(how, "setuid")      ? (setgid(65534) | setuid(65534))
          : !strcmp(how, "setresuid") ? (setresgid(65534, 65534, 65534) |
                                         setresuid(65534, 65534, 65534))
                                      : (setegid(65534) | seteuid(65534));
  if (r != 0) { perror("drop"); return 1; }
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  pthread_join(t, 0);
  pid_t child = fork();
  if (child == 0) {
    for (long i = 0; i < 50000; ++i) work(1);
    _exit(0);
  }
  waitpid(child, 0, 0);
  long s = 0;
  for (long i = 0; i < 200000; ++i) s += work(3);
  printf("user %d sum %ld\n", (int)geteuid(), s);
  return 4;
}
"""

WORK_CALLS = 1 + 50000 + 50000 + 200000

SERVER = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/fsuid.h>
#include <unistd.h>
#define NOINLINE __attribute__((noinline))
#define PLAIN __attribute__((no_instrument_function))
static long g_chowns;
/* The runtime's fchownat calls land here (exported: -rdynamic). */
PLAIN int fchownat(int dir, const char* path, uid_t owner, gid_t group, int flags) {
  static int (*real)(int, const char*, uid_t, gid_t, int);
  if (!real) real = (int (*)(int, const char*, uid_t, gid_t, int))dlsym(RTLD_NEXT, "fchownat");
  __atomic_fetch_add(&g_chowns, 1, __ATOMIC_RELAXED);
  return real(dir, path, owner, group, flags);
}
static volatile long sink;
NOINLINE long work(long n) { sink += n; return n * 2; }
NOINLINE long request(int i) {
  long s = 0;
  for (int k = 0; k < 2000; ++k) s += work(i & 3);
  return s;
}
int main(void) {
  long s = 0;
  for (int i = 0; i < 300; ++i) {
    setfsuid(65534);
    s += request(i);
    setfsuid(0);
  }
  printf("sum %ld chowns %ld\n", s, g_chowns);
  return 0;
}
"""
SERVER_REQUESTS = 300


def main():
    a = common.setup()
    common.need_second_user()
    prog = common.build_source(a.cc, a.work, "drop", PROGRAM)
    failures = []
    for how in ("setuid", "setresuid", "seteuid"):
        rec_dir = os.path.join(a.work, "rec." + how)
        # 64 KiB chunks: the main thread's 200 000 calls after the drop switch chunks.
        r = common.run([a.callmon, "record", "--chunk-size=64", "-o", rec_dir, "--", prog, how])
        print(how, r.stdout.strip(), r.stderr.strip())
        if r.returncode != 4 or r.stdout != "user 65534 sum 1200000\n":
            failures.append("%s: the program's output or status changed: %d %r"
                            % (how, r.returncode, r.stdout))
        if "callmon:" in r.stderr:
            failures.append("%s: callmon said: %s" % (how, r.stderr.strip()))
        rep = common.run([a.callmon, "report", "-d", rec_dir, "--format=json"])
        calls = {f["name"]: f["calls"] for f in json.loads(rep.stdout)["functions"]} \
            if rep.returncode == 0 else {}
        if calls.get("work") != WORK_CALLS or calls.get("worker") != 1:
            failures.append("%s: work called %s times, worker %s (want %d and 1)"
                            % (how, calls.get("work"), calls.get("worker"), WORK_CALLS))
        info = common.run([a.callmon, "info", "-d", rec_dir])
        if not re.search(r"problems:\s+none", info.stdout):
            failures.append("%s: info: %s" % (how, info.stdout[-300:]))
        for name in [""] + os.listdir(rec_dir):
            st = os.lstat(os.path.join(rec_dir, name))
            want = 0o700 if name == "" else 0o600
            if st.st_uid not in (0, common.NOBODY) or st.st_mode & 0o777 != want:
                failures.append("%s: %s is user %d mode %o" % (how, name or "the directory",
                                                                st.st_uid, st.st_mode & 0o777))
    # A vfork child that drops privileges, then execs: the parent's recording stays root's.
    rec_dir = os.path.join(a.work, "rec.vfork")
    r = common.run([a.callmon, "record", "--chunk-size=64", "-o", rec_dir, "--", prog, "vfork"])
    print("vfork", r.stdout.strip(), r.stderr.strip())
    if r.returncode != 4 or r.stdout != "user 0 sum 1200000 child 5\n" or "callmon:" in r.stderr:
        failures.append("vfork: the program's output or status changed: %d %r %r"
                        % (r.returncode, r.stdout, r.stderr))
    rep = common.run([a.callmon, "report", "-d", rec_dir, "--format=json"])
    calls = {f["name"]: f["calls"] for f in json.loads(rep.stdout)["functions"]} \
        if rep.returncode == 0 else {}
    if calls.get("work") != 1 + 1 + 50000 + 200000:
        failures.append("vfork: work called %s times (want %d)" % (calls.get("work"), 250002))
    info = common.run([a.callmon, "info", "-d", rec_dir, "--format=json"])
    procs = json.loads(info.stdout)["processes"] if info.returncode == 0 else []
    pids = [p["pid"] for p in sorted(procs, key=lambda p: p["pid"] in [q["ppid"] for q in procs],
                                     reverse=True)]  # the parent first
    owners = {pid: sorted({os.lstat(os.path.join(rec_dir, n)).st_uid for n in os.listdir(rec_dir)
                           if n.startswith("%d." % pid)}) for pid in pids}
    if len(pids) != 2 or owners[pids[0]] != [0] or owners[pids[1]] != [common.NOBODY]:
        failures.append("vfork: the files' owners by process %s (want the parent's root's, "
                        "the exec'd child's nobody's)" % owners)
    server = common.build_source(a.cc, a.work, "fsuid_server", SERVER, ("-rdynamic",))
    rec_dir = os.path.join(a.work, "rec.setfsuid")
    r = common.run([a.callmon, "record", "--chunk-size=64", "-o", rec_dir, "--", server])
    print("setfsuid", r.stdout.strip(), r.stderr.strip())
    m = re.fullmatch(r"sum (\d+) chowns (\d+)\n", r.stdout)
    if r.returncode != 0 or not m or int(m.group(1)) != 2000 * 2 * (0 + 1 + 2 + 3) * 75:
        failures.append("setfsuid: the program's output or status changed: %d %r"
                        % (r.returncode, r.stdout))
    elif int(m.group(2)) > 2 * len(os.listdir(rec_dir)):
        failures.append("setfsuid: the runtime chowned %s times for %d files over %d requests"
                        % (m.group(2), len(os.listdir(rec_dir)), SERVER_REQUESTS))
    rep = common.run([a.callmon, "report", "-d", rec_dir, "--format=json"])
    calls = {f["name"]: f["calls"] for f in json.loads(rep.stdout)["functions"]} \
        if rep.returncode == 0 else {}
    if calls.get("work") != 2000 * SERVER_REQUESTS or calls.get("request") != SERVER_REQUESTS:
        failures.append("setfsuid: work called %s times, request %s" %
                        (calls.get("work"), calls.get("request")))
    if failures:
        common.fail("; ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
