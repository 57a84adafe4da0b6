#!/usr/bin/env python3
"""XRay sleds are patched by callmon only when recorded, and only the selected functions'.

Builds tests/programs/xray_sites.c with clang -fxray-instrument
-fxray-instruction-threshold=1 at --opt and runs it (it counts its own compiled and patched
sleds on stderr):
- plainly, and with libcallmon.so preloaded but no recording directory: every sled holds
  XRay's compiled bytes (compiler-rt's own XRay runtime, linked in, patches nothing either);
- under `callmon record`: every sled is patched, the report counts the calls exactly, and
  `info` says how many functions' sleds were patched;
- under `callmon record --exclude '^leaf$'`: leaf's sleds stay as compiled, the others are
  patched, and leaf's calls are not recorded.
- under `callmon record` with XRAY_OPTIONS=patch_premain=true (compiler-rt's runtime
  patched the sleds first): callmon refuses them, says so in one line, records none.
The program's stdout and exit status are the same every time.

Exit status: 0 passed, 1 failed, 77 skipped. Python stdlib only.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_fixture  # noqa: E402  (MODE_FLAGS, run, describe, site_test_start)

STDOUT = "result 51\n"
SLEDS = re.compile(r"sleds: (\d+) compiled, (\d+) patched \((\d+) of leaf\), (\d+) other")


def sleds(proc):
    m = SLEDS.search(proc.stderr)
    return tuple(int(g) for g in m.groups()) if m else None


def report_counts(callmon, data, work):
    proc = run_fixture.run([callmon, "report", "--format=json", "-d", data], work)
    if proc.returncode != 0:
        return None
    rows = json.loads(proc.stdout).get("functions", [])
    return {r["name"]: r["calls"] for r in rows if r["name"] in ("main", "middle", "leaf")}


def xray_functions(callmon, data, work):
    """info's count of functions whose sleds were patched, and of sleds refused."""
    proc = run_fixture.run([callmon, "info", "--format", "json", "-d", data], work)
    if proc.returncode != 0:
        return None
    p = json.loads(proc.stdout)["processes"][0]
    return p.get("xray_functions"), p.get("xray_refused")


def main():
    args, skip = run_fixture.site_test_start(
        __doc__, lambda ap: ap.add_argument("--opt", default="O2"))
    if skip:
        return skip
    prog = run_fixture.build_site_program(args, "xray_sites",
                                          [f"-{args.opt}"] + run_fixture.MODE_FLAGS["xray"])
    if not prog:
        return 1
    problems = []

    def expect(what, proc, want_sleds):
        if proc.returncode != 0 or proc.stdout != STDOUT:
            problems.append(f"{what}: stdout/status differ\n" + run_fixture.describe(proc))
        got = sleds(proc)
        if got is None or not want_sleds(got):
            problems.append(f"{what}: sleds {got}\n" + run_fixture.describe(proc))
        return got

    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLMON_")}
    plain = expect("plain", run_fixture.run([prog], args.work, env=env),
                   lambda g: g[1] == 0 and g[3] == 0 and g[0] > 0)
    total = plain[0] if plain else 0
    expect("preloaded, not recording",
           run_fixture.run([prog], args.work, env=dict(env, LD_PRELOAD=args.runtime)),
           lambda g: g == (total, 0, 0, 0))
    data = os.path.join(args.work, "all.data")
    rec = run_fixture.run([args.callmon, "record", "-o", data, "--", prog], args.work)
    expect("recorded", rec, lambda g: g[0] == 0 and g[1] == total and g[2] == 2 and g[3] == 0)
    counts = report_counts(args.callmon, data, args.work)
    if counts != {"main": 1, "middle": 3, "leaf": 6}:
        problems.append(f"recorded: report counts {counts}")
    got = xray_functions(args.callmon, data, args.work)
    if got != (3, 0):  # main, middle, leaf
        problems.append(f"recorded: info {got}")
    data = os.path.join(args.work, "noleaf.data")
    rec = run_fixture.run([args.callmon, "record", "-o", data, "--exclude", "^leaf$", "--", prog],
                          args.work)
    expect("recorded without leaf", rec,
           lambda g: g[0] == 2 and g[1] == total - 2 and g[2] == 0 and g[3] == 0)
    counts = report_counts(args.callmon, data, args.work)
    if counts != {"main": 1, "middle": 3}:
        problems.append(f"recorded without leaf: report counts {counts}")
    got = xray_functions(args.callmon, data, args.work)
    if got != (2, 0):
        problems.append(f"recorded without leaf: info {got}")
    # compiler-rt's own XRay runtime told to patch before main: its sleds are not callmon's
    # to rewrite, and the program must run on as without callmon; one line says so.
    data = os.path.join(args.work, "compiler_rt.data")
    xenv = dict(os.environ, XRAY_OPTIONS="patch_premain=true xray_mode=xray-basic verbosity=0")
    rec = run_fixture.run([args.callmon, "record", "-o", data, "--", prog], args.work, env=xenv)
    refused = [l for l in rec.stderr.splitlines() if "XRay sled(s) hold unknown bytes" in l]
    if rec.returncode != 0 or rec.stdout != STDOUT or len(refused) != 1:
        problems.append("compiler-rt patched first: status, stdout or the one refusal line\n" +
                        run_fixture.describe(rec))
    counts = report_counts(args.callmon, data, args.work)
    if counts not in ({}, None):
        problems.append(f"compiler-rt patched first: report counts {counts}")
    for p in problems:
        print("FAIL: " + p)
    print(f"{len(problems)} problem(s)" if problems else "PASS")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
