#!/usr/bin/env python3
"""Fault tests of `callmon record` that need their own set-up (run_fixture.py cannot do it).

--case disk_full   the recording directory is a 1 MiB tmpfs and the program writes ~20 MB of
                   trace: the program's output and status are unchanged, the runtime says
                   in one line per thread that the recording stopped, `info` shows the
                   threads as stopped with events lost, and report, replay, info and dump
                   all read what was written, exit 0 and warn that the recording stopped.
--case fsize       the same with RLIMIT_FSIZE lowered by the program itself (1 MiB).
--case bad_dir     -o names a directory that cannot be created (under a regular file) or
                   written (a read-only tmpfs): record fails with one line before the
                   program starts; with --untraced-ok the program runs untraced with a
                   one-line warning and its own status.

Mounting needs root: without it the tmpfs cases are skipped (exit 77).
Exit status: 0 passed, 1 failed, 77 skipped. Python stdlib only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
import run_fixture as rf  # noqa: E402

CALLS = 2000000  # per thread: ~10 MB of trace each, far beyond the 1 MiB directory


def mount_tmpfs(path, options):
    os.makedirs(path, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", path],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"SKIP: cannot mount a tmpfs ({proc.stderr.strip()}); run as root")
        return False
    return True


def umount(path):
    subprocess.run(["umount", "-l", path], capture_output=True)


def build(program, args, work):
    fx = types.SimpleNamespace(SOURCES=[program + ".c"], PROGRAM=program)
    return rf.build(fx, args, work)


def stopped_recording(args, failures, data, argv, stderr_reason):
    """Records argv into data (which fills up), then checks everything that must hold."""
    plain = rf.run(argv, args.work)
    failures.check_equal("plain run: exit status", 0, plain.returncode)
    rec = rf.run([args.callmon, "record", "-o", data, "--"] + argv, args.work, timeout=60)
    failures.check_equal("record: program's stdout (as without callmon)", plain.stdout,
                         rec.stdout)
    failures.check_equal("record: exit status (the program's)", 0, rec.returncode)
    runtime_lines = re.findall(
        r"^callmon: cannot extend (\S+/\d+\.\d+\.(\d+)\.events): " + re.escape(stderr_reason) +
        r"; the recording of thread (\d+) stops here, the program runs on$",
        rec.stderr, re.M)
    if not runtime_lines or any(tid != tid2 for _, tid, tid2 in runtime_lines):
        failures.add("record: the runtime's line saying where the recording stopped",
                     rf.describe(rec))
    lines = rec.stderr.splitlines()
    print(f"record stderr ({len(lines)} lines):\n" + "\n".join(lines[:6]), flush=True)
    if len(lines) > 2:  # one line per stopped thread, the program has two
        failures.add("record: one runtime line per stopped thread",
                     f"  got {len(lines)} lines on stderr")

    info_proc = rf.run([args.callmon, "info", "--format=json", "-d", data], args.work)
    info = rf.json_of(info_proc, "info --format=json", failures)
    if info is None:
        return
    threads = [t for p in info.get("processes", []) for t in p.get("threads", [])]
    stopped = [t for t in threads if t.get("stopped")]
    if len(stopped) != len(runtime_lines):
        failures.add("info: threads marked stopped",
                     f"  expected {len(runtime_lines)} (one per runtime line), got "
                     f"{[(t.get('tid'), t.get('stopped')) for t in threads]}")
    for t in stopped:
        if not t.get("lost_events", 0) > 0:
            failures.add("info: lost_events of a stopped thread", f"  {t}")
    problems = info.get("problems", [])
    if not any("stopped" in p for p in problems):
        failures.add("info: problems name the stopped recording", f"  {problems}")
    # Each reader reads what was written and warns, in one line per file, that it stopped.
    for cmd in (["report", "--format=json"], ["replay"], ["info"], ["dump"]):
        proc = rf.run([args.callmon] + cmd + ["-d", data], args.work)
        what = "callmon " + " ".join(cmd)
        if proc.returncode != 0:
            failures.add(what + ": exit status", rf.describe(proc))
            continue
        warnings = [l for l in proc.stderr.splitlines() if l.strip()]
        good = [l for l in warnings if re.match(rf"callmon {cmd[0]}: warning: .*stopped", l)]
        if len(good) != len(stopped) or len(good) != len(warnings):
            failures.add(what + ": one warning per stopped thread and nothing else",
                         f"  stderr: {proc.stderr[-1500:]!r}")
        if not proc.stdout.strip():
            failures.add(what + ": output", "  nothing printed")
        if cmd[0] == "report":
            try:
                counts = {f["name"]: f["calls"] for f in json.loads(proc.stdout)["functions"]}
            except (ValueError, KeyError) as e:
                failures.add(what + ": JSON", f"  {e}")
                continue
            if not 0 < counts.get("work", 0) < 2 * CALLS:
                failures.add(what + ": work() counted in part", f"  {counts}")
            if sum(counts.values()) != info.get("calls"):
                failures.add(what + ": calls agree with info", f"  {counts} vs {info.get('calls')}")


def case_disk_full(args, failures):
    build("fault_fill", args, args.work)
    data = os.path.join(args.work, "small")
    if not mount_tmpfs(data, "size=1024k"):
        return rf.SKIP
    try:
        stopped_recording(args, failures, data, ["./fault_fill", str(CALLS)],
                          "No space left on device")
    finally:
        umount(data)
    return None


def case_fsize(args, failures):
    build("fault_fill", args, args.work)
    data = os.path.join(args.work, "callmon.data")
    stopped_recording(args, failures, data, ["./fault_fill", str(CALLS), "1024"],
                      "File too large")
    return None


def case_bad_dir(args, failures):
    build("fault_hello", args, args.work)
    plain_out = "hello from the program\n"
    a_file = os.path.join(args.work, "a_file")
    with open(a_file, "w") as f:
        f.write("not a directory\n")
    dirs = [("under a regular file", os.path.join(a_file, "rec"))]
    readonly = os.path.join(args.work, "readonly")
    mounted = mount_tmpfs(readonly, "ro,size=64k")
    if mounted:
        dirs.append(("on a read-only file system", os.path.join(readonly, "rec")))
        dirs.append(("a read-only directory itself", readonly))
    try:
        for what, d in dirs:
            cmd = [args.callmon, "record", "-o", d, "--", "./fault_hello"]
            proc = rf.run(cmd, args.work)
            lines = proc.stderr.splitlines()
            if proc.returncode in (0, 3) or proc.stdout or len(lines) != 1 or \
                    not lines[0].startswith("callmon record: error: ") or d not in lines[0]:
                failures.add(f"record -o {what}: one error line naming {d}, program not run",
                             rf.describe(proc) + f"\n  stdout: {proc.stdout!r}")
            print(f"{what}: {proc.stderr.strip()}")
            proc = rf.run(cmd[:2] + ["--untraced-ok"] + cmd[2:], args.work)
            lines = proc.stderr.splitlines()
            if proc.returncode != 3 or proc.stdout != plain_out or len(lines) != 1 or \
                    not lines[0].startswith("callmon record: warning: ") or \
                    "untraced" not in lines[0]:
                failures.add(f"record --untraced-ok -o {what}: the program runs untraced, "
                             "status 3, one warning", rf.describe(proc) +
                             f"\n  stdout: {proc.stdout!r}")
            print(f"{what} --untraced-ok: {proc.stderr.strip()}")
    finally:
        if mounted:
            umount(readonly)
    return None if mounted else rf.SKIP


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("--callmon", "--cc", "--cxx", "--work"):
        ap.add_argument(name, required=True)
    ap.add_argument("--case", required=True, choices=["disk_full", "fsize", "bad_dir"])
    ap.add_argument("--compiler", default="gcc")
    ap.add_argument("--opt", default="O2")
    args = ap.parse_args()
    if os.path.ismount(os.path.join(args.work, "small")):
        umount(os.path.join(args.work, "small"))
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    failures = rf.Failures()
    try:
        status = globals()["case_" + args.case](args, failures)
    except RuntimeError as e:
        print(f"FAIL: {e}")
        return 1
    if status == rf.SKIP and not failures.items:
        return rf.SKIP
    return rf.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
