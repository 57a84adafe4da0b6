#!/usr/bin/env python3
"""Library calls on a real program: Lua 5.4 built with -finstrument-functions, recorded with
library calls on (docs/patching.md, "Library calls"). uftrace 0.13 aborts this program in
its libcall mode ("invalid dynsym idx").

Builds Lua from its sources (`apt-get source lua5.4`, given with --lua-src: the directory
holding src/) with -O2 -finstrument-functions (or --hook's flags: '-pg', '-pg -mfentry'), runs a workload script (strings, tables,
table.sort with a Lua comparator, string.format, pcall/error, i.e. longjmp, coroutines)
plainly, under the counting LD_PRELOAD wrapper tests/programs/libcall_counter.c and under
`callmon record`, and checks: the same output and status, and callmon's counts of free,
memcpy and strlen equal the wrapper's. Too slow to build for CI (40 s of compiling); run by
hand:

    python3 bench/run_lua_libcall.py --lua-src /work/realprog-lua/lua5.4-5.4.4 [--uftrace]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = r'''
local t = {}
for i = 1, 2000 do t[i] = string.format("%05d-%s", (i * 7919) % 2000, ("x"):rep(i % 7)) end
table.sort(t, function(a, b) return a > b end)
local n = 0
for _, s in ipairs(t) do n = n + #s:upper() end
local ok, err = pcall(function() error("boom") end)
local co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end)
local sum = co() + co() + co()
local parts = {}
for w in ("the quick brown fox jumps over the lazy dog"):gmatch("%a+") do parts[#parts + 1] = w:reverse() end
io.write(t[1], " ", t[#t], " ", n, " ", tostring(ok), " ", err:match("boom"), " ", sum, " ", table.concat(parts, ","), "\n")
print(string.format("%.3f", math.sqrt(2)), os.time{year=2020, month=1, day=1, hour=0})
'''
COMPARED = ["free", "memcpy", "strlen"]


def run(cmd, cwd, env=None):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lua-src", required=True)
    ap.add_argument("--callmon", default=os.path.join(ROOT, "build", "bin", "callmon"))
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--hook", default="-finstrument-functions",
                    help="the instrumentation flags, e.g. '-pg' or '-pg -mfentry'")
    ap.add_argument("--uftrace", action="store_true", help="also try uftrace record (libcall on)")
    a = ap.parse_args()
    src = os.path.join(a.lua_src, "src")
    w = tempfile.mkdtemp(prefix="callmon-lua.")
    with open(os.path.join(w, "lua5.4-deb-multiarch.h"), "w") as f:
        f.write('#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n')  # Debian's patched luaconf.h
    sources = [os.path.join(src, s) for s in sorted(os.listdir(src))
               if s.endswith(".c") and s not in ("luac.c", "onelua.c")]
    r = run([a.cc, "-O2", "-g", *a.hook.split(), "-DLUA_USE_LINUX", "-I", w, "-o",
             "lua"] + sources + ["-lm", "-ldl"], w)
    if r.returncode != 0:
        print("building Lua failed:", r.stderr[-2000:])
        return 1
    r = run([a.cc, "-O2", "-fPIC", "-shared", "-o", "counter.so",
             os.path.join(ROOT, "tests", "programs", "libcall_counter.c"), "-ldl"], w)
    if r.returncode != 0:
        print("building the counter failed:", r.stderr)
        return 1
    with open(os.path.join(w, "work.lua"), "w") as f:
        f.write(SCRIPT)
    plain = run(["./lua", "work.lua"], w)
    env = dict(os.environ, LD_PRELOAD=os.path.join(w, "counter.so"),
               LIBCALL_COUNTS=os.path.join(w, "counts.txt"))
    run(["./lua", "work.lua"], w, env)
    want = dict((l.split()[0], int(l.split()[1])) for l in open(os.path.join(w, "counts.txt")))
    rec = run([a.callmon, "record", "-o", "rec", "--", "./lua", "work.lua"], w)
    problems = []
    if (rec.stdout, rec.returncode) != (plain.stdout, plain.returncode):
        problems.append(f"output changed: {rec.stdout!r} {rec.returncode} stderr {rec.stderr}")
    report = json.loads(run([a.callmon, "report", "--format=json", "-d", "rec"], w).stdout)
    got = {}
    for fn in report["functions"]:
        got[fn["name"]] = got.get(fn["name"], 0) + fn["calls"]
    for name in COMPARED:
        print(f"{name:8} wrapper {want[name]:7}  callmon {got.get(name, 0):7}")
        if want[name] != got.get(name, 0):
            problems.append(f"{name}: wrapper {want[name]}, callmon {got.get(name, 0)}")
    print("output unchanged" if not problems or "output" not in problems[0] else "OUTPUT CHANGED")
    if a.uftrace and shutil.which("uftrace"):
        u = run(["uftrace", "record", "./lua", "work.lua"], w)
        print(f"uftrace record (libcall on): status {u.returncode}, "
              f"{'same output' if u.stdout == plain.stdout else 'output differs'}; "
              f"stderr: {u.stderr.strip()[-300:]}")
    for p in problems:
        print("FAIL:", p)
    shutil.rmtree(w, ignore_errors=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
