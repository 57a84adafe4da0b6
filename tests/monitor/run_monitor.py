#!/usr/bin/env python3
"""End-to-end tests of `callmon monitor` on unmodified -O2 fixture programs (tests/monitor/*.c,
compiled here with plain flags, no instrumentation). One case per run (--case NAME), so CTest
runs them in parallel; exit 0 passed, 1 failed, 77 skipped (ptrace not available).
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def build(cc, work, name, extra=(), out=None):
    exe = os.path.join(work, out or name)
    src = os.path.join(HERE, name + ".c")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        subprocess.run([cc, "-O2", "-g", "-o", exe + ".tmp", src, *extra], check=True)
        os.replace(exe + ".tmp", exe)
    return exe


def monitor(args, callmon, work, timeout=60):
    out = os.path.join(work, "report.json")
    if os.path.exists(out):
        os.unlink(out)
    p = subprocess.run([callmon, "monitor", "--format", "json", "-o", out, *args],
                       capture_output=True, text=True, timeout=timeout, cwd=work)
    report = json.load(open(out)) if os.path.exists(out) else None
    return p, report


def hits(image, name):
    return sum(u["hits"] for u in image["units"] if u["name"] == name)


def unit(image, name):
    return next(u for u in image["units"] if u["name"] == name)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def case_counts(a):
    exe = build(a.cc, a.work, "counts")
    for extra in ([], ["--single-step"]):
        p, r = monitor(extra + ["--", exe], a.callmon, a.work)
        expect(p.returncode == 3, f"exit status passed through: {p.returncode} {p.stderr}")
        img = r["images"][0]
        got = {n: hits(img, n) for n in ("leaf", "mid", "fib", "sleeper", "never_called", "main")}
        expect(got == {"leaf": 1000, "mid": 100, "fib": 1973, "sleeper": 2, "never_called": 0,
                       "main": 1}, f"counts {extra}: {got}")
        if not extra:
            expect(img["emulated"] > img["stepped"], f"mostly emulated: {img}")
        else:
            expect(img["emulated"] == 0, "--single-step never emulates")


def case_one_shot(a):
    exe = build(a.cc, a.work, "counts")
    p, r = monitor(["--one-shot", "--", exe], a.callmon, a.work)
    expect(p.returncode == 3, f"status {p.returncode}")
    img = r["images"][0]
    got = {n: hits(img, n) for n in ("leaf", "mid", "fib", "never_called")}
    expect(got == {"leaf": 1, "mid": 1, "fib": 1, "never_called": 0}, f"one-shot {got}")


def case_select(a):
    exe = build(a.cc, a.work, "counts")
    p, r = monitor(["--select", "fib", "l?af", "--", exe], a.callmon, a.work)
    names = sorted(u["name"] for u in r["images"][0]["units"])
    expect(names == ["fib", "leaf"], f"selected {names}")
    expect(hits(r["images"][0], "fib") == 1973, "fib count")


def case_timing(a):
    exe = build(a.cc, a.work, "counts")
    p, r = monitor(["--timing", "--", exe], a.callmon, a.work)
    expect(p.returncode == 3, f"status {p.returncode} {p.stderr}")
    img = r["images"][0]
    s = unit(img, "sleeper")
    expect(s["hits"] == 2 and 100e6 <= s["total_ns"] < 2e9, f"sleeper {s}")
    m = unit(img, "main")
    expect(m["total_ns"] >= s["total_ns"], f"main includes sleeper: {m}")
    f = unit(img, "fib")
    expect(f["hits"] == 1973 and f["total_ns"] <= m["total_ns"], f"fib once counted {f}")
    expect(m["self_ns"] < m["total_ns"] - s["total_ns"] + 1, "self excludes callees")


def case_lines(a):
    exe = build(a.cc, a.work, "counts")
    out = os.path.join(a.work, "listing.txt")
    p = subprocess.run([a.callmon, "monitor", "--lines", "--select", "counts.c", "-o", out,
                        "--", exe], capture_output=True, text=True, timeout=60)
    expect(p.returncode == 3, f"status {p.returncode} {p.stderr}")
    text = open(out).read()
    line = next(l for l in text.splitlines() if "LINE:leaf" in l)
    count = line.split("\t")[2].split(":")[0].strip()
    expect(count == "1000", f"leaf line: {line!r}")
    expect(text.startswith("FILE\tLINE\tCOUNT"), "listing header")
    p = subprocess.run([a.callmon, "monitor", "--lines", "--histogram", "--select",
                        "counts.c:9", "-o", out, "--", exe], capture_output=True, text=True)
    line = next(l for l in open(out).read().splitlines() if "LINE:leaf" in l)
    expect("#" * 40 in line, f"histogram bar: {line!r}")


def case_threads(a):
    exe = build(a.cc, a.work, "threads", ["-pthread"])
    p, r = monitor(["--", exe], a.callmon, a.work)
    expect(p.returncode == 0, f"status {p.returncode} {p.stderr}")
    w = unit(r["images"][0], "work")
    per = sorted(t["hits"] for t in w["threads"])
    expect(w["hits"] == 20001 and per == [1, 5000, 5000, 5000, 5000], f"work {w}")


def case_crash(a):
    exe = build(a.cc, a.work, "crash")
    p, r = monitor(["--", exe], a.callmon, a.work)
    expect(p.returncode == 128 + signal.SIGSEGV, f"SIGSEGV status {p.returncode}")
    expect(r is not None and hits(r["images"][0], "step") == 7, "report after the crash")
    expect(r["images"][0]["end"] == "signal SIGSEGV", r["images"][0]["end"])


def case_signals(a):
    exe = build(a.cc, a.work, "crash")
    p, r = monitor(["--", exe, "signals"], a.callmon, a.work)
    expect(p.returncode == 128 + signal.SIGTERM, f"SIGTERM status {p.returncode}")
    img = r["images"][0]
    expect(hits(img, "on_usr1") == 3 and hits(img, "step") == 7, "handler ran 3 times")


def case_fork(a):
    exe = build(a.cc, a.work, "forks")
    p, r = monitor(["--", exe], a.callmon, a.work)
    expect(p.returncode == 4, f"child survived the breakpoints: {p.returncode} {p.stderr}")
    expect(len(r["images"]) == 1 and hits(r["images"][0], "in_parent") == 3, "parent counts")
    expect(hits(r["images"][0], "in_child") == 0, "child not followed")
    p, r = monitor(["--follow-fork", "--", exe], a.callmon, a.work)
    expect(p.returncode == 4, f"status {p.returncode}")
    child = next(i for i in r["images"] if hits(i, "in_child") > 0)
    expect(hits(child, "in_child") == 5, "child counts")


def case_exec(a):
    counts = build(a.cc, a.work, "counts")
    exe = build(a.cc, a.work, "execs")
    p, r = monitor(["--follow-exec", "--", exe, counts], a.callmon, a.work)
    expect(p.returncode == 3, f"the exec'd program's status: {p.returncode} {p.stderr}")
    before = [i for i in r["images"] if hits(i, "before_exec") > 0]
    after = [i for i in r["images"] if hits(i, "leaf") > 0]
    expect(len(before) == 1 and hits(before[0], "before_exec") == 2, "counts before exec")
    expect(len(after) == 1 and hits(after[0], "leaf") == 1000 and hits(after[0], "fib") == 1973,
           f"counts of the exec'd image: {[(u['name'], u['hits']) for i in after for u in i['units']]}")


def case_stripped(a):
    # No .symtab: the functions come from .dynsym (-rdynamic exports them), in a PIE.
    exe = build(a.cc, a.work, "counts", ["-s", "-rdynamic", "-pie", "-fPIE"], out="counts_stripped")
    p, r = monitor(["--", exe], a.callmon, a.work)
    expect(p.returncode == 3, f"status {p.returncode} {p.stderr}")
    img = r["images"][0]
    got = {n: hits(img, n) for n in ("leaf", "mid", "fib", "main")}
    expect(got == {"leaf": 1000, "mid": 100, "fib": 1973, "main": 1}, f"stripped counts: {got}")


def case_attach(a):
    exe = build(a.cc, a.work, "loop", ["-pthread"])
    log = os.path.join(a.work, "loop.out")
    target = subprocess.Popen([exe], stdout=open(log, "w"))
    try:
        time.sleep(0.3)
        p, r = monitor(["-p", str(target.pid), "--duration", "1"], a.callmon, a.work)
        expect(p.returncode == 0, f"attach: {p.returncode} {p.stderr}")
        expect(r["detached"] and hits(r["images"][0], "tick") > 50, f"ticks counted")
        expect(hits(r["images"][0], "spin") > 50, "worker thread counted")
        time.sleep(0.5)
        expect(target.poll() is None, "target still running after detach")
        before = len(open(log).read().splitlines())
        time.sleep(0.3)
        lines = open(log).read().splitlines()
        expect(len(lines) > before, "target still making progress")
        nums = [int(l.split()[1]) for l in lines[:-1]]
        expect(nums == list(range(len(nums))), "output intact: tick numbers consecutive")
    finally:
        target.kill()
        target.wait()


def case_dlopen(a):
    prog = os.path.join(HERE, "..", "programs")
    plugin = os.path.join(a.work, "libcmplugin.so")
    subprocess.run([a.cc, "-O2", "-g", "-shared", "-fPIC", "-I", prog, "-o", plugin,
                    os.path.join(prog, "dlopen_plugin.c")], check=True)
    exe = os.path.join(a.work, "dlopen_main")
    subprocess.run([a.cc, "-O2", "-g", "-I", prog, "-o", exe,
                    os.path.join(prog, "dlopen_main.c"), "-ldl"], check=True)
    p, r = monitor(["--", exe], a.callmon, a.work)
    expect(p.returncode == 0, f"status {p.returncode} {p.stderr}")
    img = r["images"][0]
    expect(hits(img, "plugin_entry") == 1 and hits(img, "plugin_helper") == 4,
           "dlopen'd plugin counted through the r_debug hook")


CASES = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--work", required=True)
    ap.add_argument("--case", required=True, choices=sorted(CASES))
    a = ap.parse_args()
    a.work = os.path.join(os.path.abspath(a.work), a.case)
    os.makedirs(a.work, exist_ok=True)
    try:
        CASES[a.case](a)
    except AssertionError as e:
        print(f"monitor.{a.case}: FAILED: {e}", file=sys.stderr)
        return 1
    print(f"monitor.{a.case}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
