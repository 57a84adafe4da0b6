#!/usr/bin/env python3
"""Promise: what callmon writes is readable by its user only unless asked otherwise
(docs/security.md, "What its files reveal"). With umask 022:
- `record` makes the recording directory 0700 and every file in it 0600 (session.json,
  the meta and events files, session.sched), and another user (nobody) cannot read them;
- `html -o` and `export -o` from it write 0600, even over an existing 0644 file;
- `record --shared` makes 0755 and 0644, and html from a shared recording is 0644;
- under umask 027 `--shared` gives 0750 and 0640: the umask only takes bits away;
- `record -o` into an empty directory that another user made is refused;
- `trace -o` and `inject --log` files are 0600 (0644 with --shared), `trace --output-dir`
  makes 0700 and 0600;
- a program that sets umask 0277 itself, recorded by nobody, is recorded whole (its files
  keep their owner's read and write).
Exit 0 passed, 1 failed, 77 skipped."""
import json
import os
import stat
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common

failures = []


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def expect(path, want, what):
    if not os.path.exists(path):
        failures.append("%s: %s was not written" % (what, os.path.basename(path)))
        return
    got = mode(path)
    if got != want:
        failures.append("%s: %s is %o, not %o" % (what, os.path.basename(path), got, want))


def check_recording(d, dir_mode, file_mode, what):
    expect(d, dir_mode, what)
    if not os.path.isdir(d):
        return
    names = os.listdir(d)
    if not any(n.endswith(".events") for n in names) or "session.json" not in names:
        failures.append("%s: incomplete recording %s" % (what, names))
    for n in names:
        expect(os.path.join(d, n), file_mode, what)


def run_ok(cmd, **kw):
    r = common.run(cmd, **kw)
    if r.returncode != 0:
        failures.append("%s failed: %s" % (" ".join(cmd[:2]), r.stderr.strip()))
    return r


UMASK_SELF = r"""
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) int leaf(int x) { return x + 1; }
static void* worker(void* a) { return (void*)(long)leaf((int)(long)a); }
int main(void) {
  umask(0277);
  pthread_t t;
  void* r;
  pthread_create(&t, 0, worker, (void*)1);
  pthread_join(t, &r);
  pid_t c = fork();
  if (c == 0) _exit(leaf(2) == 3 ? 0 : 1);
  int st;
  waitpid(c, &st, 0);
  puts(leaf(0) == 1 && (long)r == 2 && st == 0 ? "ok" : "wrong");
  return 0;
}
"""


def main():
    a = common.setup()
    common.need_second_user()
    fib = common.build_fib(a.cc, a.work)
    w = a.work
    cm = a.callmon
    os.umask(0o022)

    private = os.path.join(w, "private")
    run_ok([cm, "record", "-o", private, "--", fib])
    check_recording(private, 0o700, 0o600, "record")
    r = common.run(common.as_nobody(["cat", os.path.join(private, "session.json")]))
    if r.returncode == 0:
        failures.append("another user read the private recording's session.json")
    html = os.path.join(w, "private.html")
    with open(html, "w") as f:
        f.write("old\n")
    os.chmod(html, 0o644)
    run_ok([cm, "html", "-d", private, "-o", html])
    expect(html, 0o600, "html over a 0644 file")
    chrome = os.path.join(w, "private.json")
    run_ok([cm, "export", "-d", private, "--format=chrome", "-o", chrome])
    expect(chrome, 0o600, "export")

    shared = os.path.join(w, "shared")
    run_ok([cm, "record", "--shared", "-o", shared, "--", fib])
    check_recording(shared, 0o755, 0o644, "record --shared")
    r = common.run(common.as_nobody(["cat", os.path.join(shared, "session.json")]))
    if r.returncode != 0:
        failures.append("another user cannot read the shared recording: " + r.stderr.strip())
    shared_html = os.path.join(w, "shared.html")
    run_ok([cm, "html", "-d", shared, "-o", shared_html])
    expect(shared_html, 0o644, "html of a shared recording")

    planted = os.path.join(w, "planted")  # an empty directory another user made first
    os.mkdir(planted, 0o777)
    os.chown(planted, common.NOBODY, common.NOBODY)
    r = common.run([cm, "record", "-o", planted, "--", fib])
    if r.returncode == 0 or "another user" not in r.stderr:
        failures.append("record used an empty directory of another user's: " + r.stderr.strip())

    os.umask(0o027)
    strict = os.path.join(w, "strict")
    run_ok([cm, "record", "--shared", "-o", strict, "--", fib])
    check_recording(strict, 0o750, 0o640, "record --shared, umask 027")
    os.umask(0o022)

    trace_out = os.path.join(w, "trace.txt")
    run_ok([cm, "trace", "-o", trace_out, "--", fib])
    expect(trace_out, 0o600, "trace -o")
    trace_shared = os.path.join(w, "trace-shared.txt")
    run_ok([cm, "trace", "--shared", "-o", trace_shared, "--", fib])
    expect(trace_shared, 0o644, "trace --shared -o")
    trace_dir = os.path.join(w, "trace-dir")
    run_ok([cm, "trace", "--output-dir", trace_dir, "--", fib])
    expect(trace_dir, 0o700, "trace --output-dir")
    for n in os.listdir(trace_dir) if os.path.isdir(trace_dir) else []:
        expect(os.path.join(trace_dir, n), 0o600, "trace --output-dir")

    config = os.path.join(w, "inject.conf")
    with open(config, "w") as f:
        f.write("fib call=1 errno ENOENT\n")
    log = os.path.join(w, "inject.log")
    run_ok([cm, "inject", "-c", config, "--log", log, "--", fib])
    expect(log, 0o600, "inject --log")

    # A program that sets a umask taking the owner's own bits (0277), with a thread and a
    # fork child, recorded by a user the file modes bind (nobody; root ignores them): the
    # files, reopened by path, could not be written again; the fork child's process file
    # stayed empty and the recording was unreadable.
    masked = common.build_source(a.cc, w, "umask_self", UMASK_SELF)
    masked_rec = os.path.join(w, "umask-self")
    r = common.run(common.as_nobody([cm, "record", "-o", masked_rec, "--", masked]), cwd=w)
    if r.returncode != 0 or r.stdout != "ok\n" or "cannot" in r.stderr:
        failures.append("program with umask 0277: status %d, %r, %r"
                        % (r.returncode, r.stdout, r.stderr.strip()))
    rep = common.run(common.as_nobody([cm, "report", "--format=json", "-d", masked_rec]))
    calls = {}
    if rep.returncode == 0:
        for f in json.loads(rep.stdout).get("functions", []):
            calls[f["name"]] = calls.get(f["name"], 0) + f["calls"]
    if calls.get("leaf") != 3:
        failures.append("program with umask 0277: report (status %d) counts leaf %s times, "
                        "not 3 (main, thread, child): %s"
                        % (rep.returncode, calls.get("leaf"), rep.stderr.strip()))

    if failures:
        common.fail("; ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
