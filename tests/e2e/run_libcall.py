#!/usr/bin/env python3
"""End-to-end test of library calls (docs/patching.md, "Library calls").

Builds tests/programs/libcall_counts.c (and its dlopen'ed plugin) with the given compiler,
hook mode and link variant (--link: plt = the default, noplt = -fno-plt, now = -z now with
full RELRO), and a counting LD_PRELOAD wrapper (libcall_counter.c, not instrumented). Runs the
program plainly, under the wrapper, and under `callmon record`, and checks: the same stdout
and exit status every way; `callmon report` counts each of malloc, free, memcpy, strlen, qsort,
pthread_mutex_lock and pthread_mutex_unlock exactly as often as the wrapper saw the
program's modules call it (with -fno-plt through GLOB_DAT slots, redirected where the code
only calls through them: all of them with gcc, not those clang loads into a register,
which are refused); the comparator is counted as often as the
program says it ran and is nested under qsort in `replay`; a recording with --no-libcall
has none of them. The library-call probe's own cost (docs/runtime.md, "Library calls' own
cost"): each process's meta file has an `overhead-libcall` line after its `overhead` line
and a `libcall-fn` line for each library function recorded, the --no-libcall one neither.
A recorded call returns to the common entry's return point (it called the function:
libcall_entry.S), an unrecorded one to the program (libcall_retaddr.c).
Exit status: 0 passed, 1 failed, 77 skipped.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(os.path.dirname(HERE), "programs")
NAMES = ["malloc", "free", "memcpy", "strlen", "qsort", "pthread_mutex_lock",
         "pthread_mutex_unlock"]
MODES = {"cyg": ["-finstrument-functions"], "fentry": ["-pg", "-mfentry"], "pg": ["-pg"],
         "patchable": ["-fpatchable-function-entry=5"],
         # gcc only, position-dependent only (no -mnop-mcount for PIC): its plugin is built
         # with -fpatchable-function-entry=5, as run_fixture.py does.
         "sled-fentry": ["-pg", "-mfentry", "-mnop-mcount", "-mrecord-mcount", "-fno-pie",
                         "-no-pie"]}
# patch: built with no flag and recorded with --patch (docs/patching.md, "Entry patching"),
# its plugin patched too: the patched modules' library calls are recorded as the others'.
MODES["patch"] = []
RECORD = {"patch": ["--patch=.", "--patch-module=libcmlibcall"]}
LINKS = {"plt": [], "noplt": ["-fno-plt"], "now": ["-Wl,-z,now", "-Wl,-z,relro"]}


def run(cmd, cwd, env=None):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, errors="replace",
                          timeout=120, env=env)


def check_throw(a, flags):
    """A C++ exception thrown by qsort's comparator and caught above qsort: the program runs
    as without callmon and each qsort call is recorded, closed by the exception."""
    w = a.work
    cmd = [a.cxx] + flags + ["-o", "throw", os.path.join(PROGRAMS, "libcall_throw.cpp")]
    if "clang" in os.path.basename(a.cxx):
        cmd += ["-lstdc++"]
    r = run(cmd, w)
    if r.returncode != 0:
        return ["building libcall_throw failed: " + r.stderr]
    plain = run(["./throw"], w)
    rec = run([a.callmon, "record", *RECORD.get(a.mode, []), "-o", "throw.rec", "--", "./throw"], w)
    if rec.stdout != plain.stdout or rec.returncode != plain.returncode:
        return [f"callmon changed libcall_throw: {rec.stdout!r} {rec.returncode} (plain "
                f"{plain.stdout!r} {plain.returncode})\nstderr: {rec.stderr}"]
    replay = run([a.callmon, "replay", "--no-pager", "-d", "throw.rec"], w).stdout
    closed = len(re.findall(r"\} /\* qsort\(\) \*/ \[exception\]", replay))
    if closed != 3:
        return [f"libcall_throw: expected 3 qsort() calls closed by the exception, got "
                f"{closed}\n{replay[:3000]}"]
    return []


def check_return_point(a, flags):
    """Where a recorded library call returns: to the common entry's return point, which
    called it (libcall_entry.S), not to the -pg exit trampoline; to the program itself
    with --no-libcall and unrecorded."""
    w = a.work
    for cmd in ([a.cc, "-O2", "-fPIC", "-shared", "-o", "libcmretaddr.so",
                 os.path.join(PROGRAMS, "libcall_retaddr_lib.c")],
                [a.cc] + flags + ["-o", "retaddr", os.path.join(PROGRAMS, "libcall_retaddr.c"),
                                  "-L.", "-lcmretaddr", "-Wl,-rpath,$ORIGIN", "-ldl"]):
        r = run(cmd, w)
        if r.returncode != 0:
            return ["building libcall_retaddr failed: " + r.stderr]
    failures = []
    for name, cmd, want in (
            ("unrecorded", ["./retaddr"], "plain"),
            ("recorded", [a.callmon, "record", *RECORD.get(a.mode, []), "-o", "ret.rec", "--",
                          "./retaddr"], "called"),
            ("--no-libcall", [a.callmon, "record", *RECORD.get(a.mode, []), "--no-libcall",
                              "-o", "ret.off", "--", "./retaddr"], "plain")):
        r = run(cmd, w)
        if r.stdout != f"return {want}\n" or r.returncode != 0:
            failures.append(f"libcall_retaddr {name}: expected 'return {want}', got "
                            f"{r.stdout!r} (status {r.returncode})\nstderr: {r.stderr}")
    return failures


def meta_files(rec):
    return sorted(os.path.join(rec, f) for f in os.listdir(rec) if f.endswith(".meta"))


def check_libcall_meta(rec, names, libcall_on):
    """The library-call calibration and markers in the meta files of `rec`: with library
    calls on, every process whose calibration measured something has `overhead-libcall`
    (inner <= outer, outer > 0) and every name in `names` recorded has a `libcall-fn` line at
    its `symbol` line's address; with them off, neither line."""
    failures = []
    fns, syms = set(), {}
    for path in meta_files(rec):
        with open(path) as f:
            lines = f.read().splitlines()
        heads = [l.split()[0] for l in lines if l.strip()]
        lib = [l.split()[1:] for l in lines if l.startswith("overhead-libcall ")]
        if not libcall_on:
            if lib or "libcall-fn" in heads:
                failures.append(f"{path}: --no-libcall, yet library-call lines")
            continue
        if "overhead" in heads and not lib:
            failures.append(f"{path}: no overhead-libcall line\n" + "\n".join(lines[:20]))
        for inner, outer in lib:
            if not 0 <= float(inner) <= float(outer) or float(outer) <= 0:
                failures.append(f"{path}: overhead-libcall {inner} {outer}")
        for l in lines:
            if l.startswith("libcall-fn "):
                fns.add((path, int(l.split()[1], 16)))
            elif l.startswith("symbol "):
                _, addr, name = l.split(" ", 2)
                syms.setdefault(name, set()).add((path, int(addr, 16)))
    if libcall_on:
        for n in names:
            if n in syms and not syms[n] & fns:
                failures.append(f"{n}: a symbol line but no libcall-fn line at its address")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--mode", default="cyg", choices=sorted(MODES))
    ap.add_argument("--link", default="plt", choices=sorted(LINKS))
    ap.add_argument("--opt", default="O2")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    if any(not c or c.endswith("NOTFOUND") or not shutil.which(c) for c in (a.cc, a.cxx)):
        print("compiler not found: skipped")
        return 77
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    w = a.work
    flags = [f"-{a.opt}", "-g", "-fno-builtin", "-Wall"] + MODES[a.mode] + LINKS[a.link]
    plugin_mode = "patchable" if a.mode == "sled-fentry" else a.mode
    plugin_flags = [f"-{a.opt}", "-g", "-fno-builtin", "-Wall"] + MODES[plugin_mode] + LINKS[a.link]
    builds = [
        [a.cc, "-O2", "-fPIC", "-shared", "-o", "counter.so",
         os.path.join(PROGRAMS, "libcall_counter.c"), "-ldl"],
        [a.cc] + plugin_flags + ["-fPIC", "-shared", "-o", "libcmlibcall.so",
                                 os.path.join(PROGRAMS, "libcall_plugin.c")],
        [a.cc] + flags + ["-pthread", "-o", "libcall", os.path.join(PROGRAMS, "libcall_counts.c"),
                          "-ldl"],
    ]
    for cmd in builds:
        r = run(cmd, w)
        if r.returncode != 0:
            print("build failed:", " ".join(cmd), r.stderr)
            return 1
    failures = []
    plain = run(["./libcall"], w)
    env = dict(os.environ, LD_PRELOAD=os.path.join(w, "counter.so"),
               LIBCALL_COUNTS=os.path.join(w, "counts.txt"))
    counted = run(["./libcall"], w, env)
    want = {}
    with open(os.path.join(w, "counts.txt")) as f:
        for line in f:
            name, n = line.split()
            want[name] = int(n)
    if counted.stdout != plain.stdout or counted.returncode != plain.returncode:
        failures.append(f"the counting wrapper changed the program: {counted.stdout!r}")
    rec = run([a.callmon, "record", *RECORD.get(a.mode, []), "-o", "rec", "--", "./libcall"], w)
    if rec.stdout != plain.stdout or rec.returncode != plain.returncode:
        failures.append(f"callmon changed the program: stdout {rec.stdout!r} status "
                        f"{rec.returncode} (plain: {plain.stdout!r} {plain.returncode})\n"
                        f"stderr: {rec.stderr}")
    report = json.loads(run([a.callmon, "report", "--format=json", "-d", "rec"], w).stdout)
    got = {}
    for f in report["functions"]:
        got[f["name"]] = got.get(f["name"], 0) + f["calls"]
    expected = {n: want[n] for n in NAMES}
    got_named = {n: got.get(n, 0) for n in NAMES}
    if a.link == "noplt" and "clang" in os.path.basename(a.cc):
        # clang -fno-plt loads a GOT slot into a register once and calls through it in a
        # loop: a read of the slot, so the slot is refused (pointer equality) and those
        # calls are not recorded. Never more than the wrapper saw, and what is recorded is
        # recorded whole per module; info says how many slots were refused.
        if any(got_named[n] > want[n] for n in NAMES) or sum(got_named.values()) == 0:
            failures.append(f"library call counts (clang -fno-plt, at most the wrapper's)\n"
                            f"  wrapper: {expected}\n  callmon: {got_named}")
        expected = got_named
    if got_named != expected:
        failures.append(f"library call counts\n  expected (wrapper): {expected}\n"
                        f"  got (callmon):      {got_named}")
    if "atoi-same 1" not in plain.stdout:
        failures.append(f"&atoi differs from dlsym's in the plain run: {plain.stdout!r}")
    m = re.search(r"compares (\d+)", plain.stdout)
    if not m or got.get("cmp", 0) != int(m.group(1)):
        failures.append(f"comparator calls: program says {m and m.group(1)}, callmon "
                        f"{got.get('cmp', 0)}")
    replay = run([a.callmon, "replay", "--no-pager", "-d", "rec"], w).stdout
    if not re.search(r"qsort\(\) \{\n(.*\|\s+cmp\(\);\n)+", replay):
        failures.append("replay: cmp() is not nested under qsort()\n" + replay[:3000])
    info = run([a.callmon, "info", "-d", "rec"], w).stdout
    if not re.search(r"[Ll]ibrary calls", info):
        failures.append("info does not show the library calls\n" + info)
    off = run([a.callmon, "record", *RECORD.get(a.mode, []), "--no-libcall", "-o", "off", "--",
               "./libcall"], w)
    if off.stdout != plain.stdout or off.returncode != plain.returncode:
        failures.append("callmon --no-libcall changed the program")
    report_off = json.loads(run([a.callmon, "report", "--format=json", "-d", "off"], w).stdout)
    leaked = [f["name"] for f in report_off["functions"] if f["name"] in NAMES]
    if leaked:
        failures.append(f"--no-libcall still recorded {leaked}")
    failures += check_libcall_meta(os.path.join(w, "rec"), [n for n in NAMES if got_named[n]], True)
    failures += check_libcall_meta(os.path.join(w, "off"), [], False)
    failures += check_throw(a, flags)
    failures += check_return_point(a, flags)
    for f in failures:
        print("FAIL:", f, "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
