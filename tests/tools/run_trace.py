#!/usr/bin/env python3
"""End-to-end test of `callmon trace`, fixtures built with one compiler at one -O level in
one hook mode (cyg: -finstrument-functions, fentry: -pg -mfentry, patchable and xray: nop
and XRay sleds, patch: no flag, traced with --patch=.):
  - trace_demo: the program's stdout and exit status (3) are its own; the trace on stderr is
    exactly the expected call tree per thread, exception and longjmp exits marked; with
    --durations -o FILE leaf calls take one line and exit lines carry durations; --include,
    --exclude and --max-depth hide calls (indentation counts shown calls only); --thread
    of another tid shows nothing; --output-dir writes one file per thread;
  - trace_crash (SIGSEGV four calls deep): callmon exits 139 and the last lines of the trace
    are the calls on the way to the crash;
  - trace_hang (killed by SIGKILL while hung): callmon exits 137 and the trace file already
    holds the calls up to hang().
Exit 0 passed, 1 failed."""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

# Short names by default (--demangle=short): "leaf()" for leaf(int).
DEMO_MAIN = ["main()", "  parent()", "    child()", "      leaf()", "    leaf()",
             "  catcher()", "    thrower()", "    <- thrower() [exception]", "  jumper()",
             "  <- jumper() [longjmp]"]
DEMO_WORKER = ["worker()", "  leaf()"]
DEMO_MAIN_DURATIONS = ["main() {", "  parent() {", "    child() {", "      leaf() D",
                       "    } child() D", "    leaf() D", "  } parent() D", "  catcher() {",
                       "    thrower() D [exception]", "  } catcher() D",
                       "  jumper() D [longjmp]", "} main() D"]
DEMO_WORKER_DURATIONS = ["worker() {", "  leaf() D", "} worker() D"]


# `callmon trace`'s own options for the mode: a program built with no flag (mode patch)
# is traced through --patch=. (docs/patching.md).
PATCH = []

def by_thread(text):
    """{tid: [line without the "[tid] " prefix]} for the trace lines of `text`."""
    threads = {}
    for line in text.splitlines():
        m = re.match(r"^\[(\d+)\] (.*)$", line)
        if m:
            threads.setdefault(int(m.group(1)), []).append(m.group(2))
    return threads


def main_and_others(threads, pid_hint=None):
    """(main thread's lines, [other threads' lines]): main is the thread with main()."""
    main = [l for l in threads.values() if l and l[0].strip().startswith("main(")]
    others = [l for l in threads.values() if not (l and l[0].strip().startswith("main("))]
    return (main[0] if main else None), others


def durations(lines):
    return [re.sub(r" \d+\.\d{3} us", " D", l) for l in lines]


def demo_checks(args, f, callmon, prog):
    work = args.work
    r = common.run([callmon, "trace", *PATCH, "--", prog], work)
    f.check("trace_demo: status, stdout", (3, "start\ncaught boom\nend\n"), (r.returncode, r.stdout))
    main, others = main_and_others(by_thread(r.stderr))
    f.check("trace_demo: main thread's trace", DEMO_MAIN, main)
    f.check("trace_demo: worker thread's trace", [DEMO_WORKER], others)
    f.check_true("trace_demo: only trace lines on stderr",
                 all(l.startswith("[") for l in r.stderr.splitlines()), repr(r.stderr[-500:]))

    out = os.path.join(work, "trace.txt")
    r = common.run([callmon, "trace", *PATCH, "--durations", "--timestamps", "-o", out, "--", prog], work)
    f.check("--durations -o: status, stdout, stderr", (3, "start\ncaught boom\nend\n", ""),
            (r.returncode, r.stdout, r.stderr))
    text = open(out).read() if os.path.exists(out) else ""
    stamps = [float(m.group(1)) for m in re.finditer(r"^\[\d+\] +(\d+\.\d{6}) ", text, re.M)]
    f.check_true("--timestamps: every line stamped, in order per file",
                 len(stamps) == len(text.splitlines()) > 0, repr(text[:300]))
    stripped = re.sub(r"^(\[\d+\]) +\d+\.\d{6} ", r"\1 ", text, flags=re.M)
    main, others = main_and_others(by_thread(stripped))
    f.check("--durations: main thread", DEMO_MAIN_DURATIONS, durations(main or []))
    f.check("--durations: worker thread", [DEMO_WORKER_DURATIONS], [durations(o) for o in others])

    r = common.run([callmon, "trace", *PATCH, "--include", "parent|leaf", "--exclude", "worker",
                    "--max-depth", "3", "--", prog], work)
    main, others = main_and_others(by_thread(r.stderr))
    shown = sorted("\n".join(l) for l in by_thread(r.stderr).values())
    f.check("--include/--exclude/--max-depth", ["leaf()", "parent()\n  leaf()"], shown)

    r = common.run([callmon, "trace", *PATCH, "--demangle=full", "--include", "^leaf", "--", prog], work)
    shown = sorted("\n".join(l) for l in by_thread(r.stderr).values())
    f.check("--demangle=full: parameter lists", ["leaf(int)", "leaf(int)\nleaf(int)"], shown)

    r = common.run([callmon, "trace", *PATCH, "--thread", "1", "--", prog], work)
    f.check("--thread of another tid: no trace", (3, ""), (r.returncode, r.stderr))

    d = os.path.join(work, "per-thread")
    r = common.run([callmon, "trace", *PATCH, "--output-dir", d, "--", prog], work)
    files = sorted(os.listdir(d)) if os.path.isdir(d) else []
    f.check_true("--output-dir: one file per thread, trace.PID.TID",
                 len(files) == 2 and all(re.fullmatch(r"trace\.\d+\.\d+", x) for x in files),
                 repr(files))
    contents = sorted(open(os.path.join(d, x)).read().splitlines() for x in files)
    f.check("--output-dir: the files' lines (no tid prefix)", sorted([DEMO_MAIN, DEMO_WORKER]),
            contents)


def crash_checks(args, f, callmon, prog):
    r = common.run([callmon, "trace", *PATCH, "--", prog], args.work)
    f.check("trace_crash: status 128+SIGSEGV, stdout", (128 + signal.SIGSEGV, "start\n"),
            (r.returncode, r.stdout))
    lines = [l.split("] ", 1)[1] for l in r.stderr.splitlines() if l.startswith("[")]
    f.check("trace_crash: the last lines lead to the crash",
            ["main()", "  level1()", "    level2()", "      level3()", "        crash_here()"],
            lines[-5:])


def fork_checks(args, f, callmon, prog):
    """A fork's child reports its own pid (the runtime once kept the parent's id in the
    child's thread info) and the parent goes on after the fork."""
    r = common.run([callmon, "trace", *PATCH, "--", prog], args.work)
    f.check("fork: status", 0, r.returncode)
    threads = by_thread(r.stderr)
    child = [t for t, lines in threads.items() if any("child_part" in l for l in lines)]
    parent = [t for t, lines in threads.items() if any("parent_part" in l for l in lines)]
    f.check_true("fork: child and parent lines under two different ids",
                 len(child) == 1 and len(parent) == 1 and child != parent, r.stderr)
    if len(child) == 1:
        f.check("fork: the child's calls of work()", 3,
                sum(1 for l in threads[child[0]] if l.strip().startswith("work(")))


def hang_checks(args, f, callmon, prog):
    out = os.path.join(args.work, "hang.txt")
    proc = subprocess.Popen([callmon, "trace", *PATCH, "-o", out, "--", prog], cwd=args.work,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    f.check("trace_hang: the program says it hangs", "hanging\n", line)
    kids = [int(p) for p in os.listdir("/proc") if p.isdigit() and _ppid(int(p)) == proc.pid]
    for pid in kids:
        os.kill(pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=common.TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
    f.check("trace_hang: status 128+SIGKILL", 128 + signal.SIGKILL, proc.returncode)
    text = open(out).read() if os.path.exists(out) else ""
    lines = [l.split("] ", 1)[1] for l in text.splitlines() if l.startswith("[")]
    f.check("trace_hang: the trace holds the calls up to hang()",
            ["main()", "  wait_for_work()", "    hang()"], lines)


def _ppid(pid):
    try:
        with open(f"/proc/{pid}/stat") as s:
            return int(s.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return -1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.add_common_args(ap)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    f = common.Failures()
    w = args.work
    if args.mode == "patch":
        PATCH.append("--patch=.")
    demo_checks(args, f, args.callmon, common.build(args, "trace_demo.cpp", os.path.join(w, "trace_demo")))
    crash_checks(args, f, args.callmon, common.build(args, "trace_crash.c", os.path.join(w, "trace_crash")))
    hang_checks(args, f, args.callmon, common.build(args, "trace_hang.c", os.path.join(w, "trace_hang")))
    fork_checks(args, f, args.callmon, common.build(args, "fork.c", os.path.join(w, "fork")))
    return f.finish()


if __name__ == "__main__":
    sys.exit(main())
