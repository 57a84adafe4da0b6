#!/usr/bin/env python3
"""Nop sleds are patched only when recorded, and only where they hold the expected nops.

Builds tests/programs/sled_sites.c in a sled mode (--mode sled-fentry: gcc -pg -mfentry
-mnop-mcount -mrecord-mcount; patchable: -fpatchable-function-entry=5), optionally with a
list entry that names a function without a sled (--bad-site), and checks:
- run plainly, with libcallmon.so preloaded but nothing recorded, and with a recording
  directory that does not exist (one line on stderr), every listed site still holds its
  nop (the program counts them itself) and the output is the same;
- with --misplaced (gcc -fpatchable-function-entry=5,1: the listed address is one nop
  before the entry) no site is patched, recorded or not, and one line says why;
- under `callmon record` every sled became a jump to its stub, the program's result is unchanged, the
  bad site (if any) is left as it is and reported in exactly one line on stderr, and the
  report counts exactly the expected calls (not the refused function's).

Exit status: 0 passed, 1 failed, 77 skipped. Python stdlib only.
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_fixture  # noqa: E402  (MODE_FLAGS, run, site_test_start)

RESULT = "result 33\n"  # sum over i<3 of (3i+1)+(3i+4), plus 42 with the bad site
COUNTS = {"main()": 1, "middle()": 3, "leaf()": 6}


def main():
    def more_args(ap):
        ap.add_argument("--mode", required=True, choices=["sled-fentry", "patchable", "fentry", "pg"])
        ap.add_argument("--bad-site", action="store_true")
        ap.add_argument("--misplaced", action="store_true",
                        help="build with -fpatchable-function-entry=5,1 (patchable mode)")

    args, skip = run_fixture.site_test_start(__doc__, more_args)
    if skip:
        return skip
    flags = ["-O2"] + run_fixture.MODE_FLAGS[args.mode]
    flags += ["-DBAD_SITE"] if args.bad_site else []
    flags += ["-fpatchable-function-entry=5,1"] if args.misplaced else []
    flags += ["-DFUNCTIONS"] if args.mode in ("fentry", "pg") else []
    prog = run_fixture.build_site_program(args, "sled_sites", flags)
    if not prog:
        return 1
    failures = run_fixture.Failures()
    if args.mode in ("fentry", "pg"):
        return fentry_sites(args, prog, failures)
    result = "result 75\n" if args.bad_site else RESULT
    other = 1 if args.bad_site else 0

    plain = run_fixture.run([prog], args.work)
    m = re.search(r"^sites nop (\d+) call (\d+) jump (\d+) other (\d+)$", plain.stdout, re.M)
    if plain.returncode != 0 or not m:
        failures.add("plain run", run_fixture.describe(plain) + f"\n  stdout: {plain.stdout!r}")
        return run_fixture.finish(failures)
    sites = int(m.group(1))
    if sites < len(COUNTS):
        failures.add("plain run: sled sites", f"  expected at least {len(COUNTS)} nops, got {sites}")
    failures.check_equal("plain run: stdout", f"{result}sites nop {sites} call 0 jump 0 other {other}\n",
                         plain.stdout)

    env = dict(os.environ)
    env.pop("CALLMON_DIR", None)
    env["LD_PRELOAD"] = os.path.abspath(args.runtime)
    preload = run_fixture.run([prog], args.work, env=env)
    failures.check_equal("preloaded, not recording: stdout (nops untouched)", plain.stdout,
                         preload.stdout)
    failures.check_equal("preloaded, not recording: stderr", "", preload.stderr)

    # Recording asked for but impossible: no patch (native speed), one line saying so.
    env["CALLMON_DIR"] = os.path.join(args.work, "missing")
    nodir = run_fixture.run([prog], args.work, env=env)
    failures.check_equal("unusable recording directory: stdout (nops untouched)", plain.stdout,
                         nodir.stdout)
    lines = nodir.stderr.splitlines()
    if len(lines) != 1 or "the program runs untraced" not in lines[0]:
        failures.add("unusable recording directory: stderr", f"  {nodir.stderr!r}")

    data = os.path.join(args.work, "callmon.data")
    rec = run_fixture.run([args.callmon, "record", "--no-libcall", "-o", data, "--", prog], args.work)
    failures.check_equal("record: exit status", 0, rec.returncode)
    if args.misplaced:
        failures.check_equal("record: stdout (nothing patched)", plain.stdout, rec.stdout)
        if sum("are not function entries by the unwind tables" in line for line in rec.stderr.splitlines()) != 1:
            failures.add("record: the misplaced sites' report", f"  stderr: {rec.stderr!r}")
        return run_fixture.finish(failures)
    # Every sled a jump to its function's stub (sled_call_stub.hpp), none a call of __fentry__.
    failures.check_equal("record: stdout (every sled patched, bad site left)",
                         f"{result}sites nop 0 call 0 jump {sites} other {other}\n", rec.stdout)
    refusals = [line for line in rec.stderr.splitlines() if "do not hold the expected nop" in line]
    if args.bad_site:
        if len(refusals) != 1 or "1 sled site(s)" not in refusals[0] or \
                "b8 2a 00 00 00" not in refusals[0]:
            failures.add("record: the refused site's report", f"  stderr: {rec.stderr!r}")
    elif refusals:
        failures.add("record: unexpected refusal", f"  stderr: {rec.stderr!r}")
    rep = run_fixture.run([args.callmon, "report", "--format=json", "-d", data], args.work)
    if rep.returncode != 0:
        failures.add("report", run_fixture.describe(rep))
    else:
        got = {}
        for f in json.loads(rep.stdout).get("functions", []):
            name = f["name"] if "(" in f["name"] else f["name"] + "()"
            got[name] = got.get(name, 0) + f["calls"]
        failures.check_equal("report: calls per function", COUNTS, got)

    # A record-time filter patches only the selected functions: the rest keep their nops.
    sel = os.path.join(args.work, "selected.data")
    rec = run_fixture.run([args.callmon, "record", "--no-libcall", "-o", sel, "--include", "^leaf", "--", prog],
                          args.work)
    failures.check_equal("record --include ^leaf: stdout (only leaf patched)",
                         f"{result}sites nop {sites - 1} call 0 jump 1 other {other}\n", rec.stdout)
    rep = run_fixture.run([args.callmon, "report", "--format=json", "-d", sel], args.work)
    if rep.returncode != 0:
        failures.add("report of the filtered recording", run_fixture.describe(rep))
    else:
        got = {f["name"].split("(")[0]: f["calls"] for f in json.loads(rep.stdout)["functions"]}
        failures.check_equal("record --include ^leaf: calls", {"leaf": 6}, got)
    return run_fixture.finish(failures)


def fentry_sites(args, prog, failures):
    """-pg -mfentry and -pg (the fixture counts its three functions' first instructions):
    recorded, each call of __fentry__ became a jump to its function's stub
    (fentry_sites.hpp), and each -pg function's entry a jump to its trampoline
    (mcount_entry.hpp), every function's, selected or not (the hooks filter), which `info`
    counts; the counts are exact (a call of mcount left in place would record the function
    a second time)."""
    plain = run_fixture.run([prog], args.work)
    if args.mode == "pg":  # the prologue before the call of mcount
        m = re.search(r"^sites nop 0 call 0 jump 0 other (\d+)$", plain.stdout, re.M)
    else:
        m = re.search(r"^sites nop 0 call (\d+) jump 0 other 0$", plain.stdout, re.M)
    if plain.returncode != 0 or not m or int(m.group(1)) < len(COUNTS):
        failures.add("plain run", run_fixture.describe(plain) + f"\n  stdout: {plain.stdout!r}")
        return run_fixture.finish(failures)
    sites = int(m.group(1))
    for name, extra, counts in (("record", [], COUNTS),
                                ("record --include ^leaf", ["--include", "^leaf"], {"leaf": 6})):
        data = os.path.join(args.work, name.replace(" ", "_").replace("^", "") + ".data")
        rec = run_fixture.run([args.callmon, "record", "--no-libcall", "-o", data, *extra, "--", prog],
                              args.work)
        failures.check_equal(f"{name}: exit status", 0, rec.returncode)
        failures.check_equal(f"{name}: stdout (every entry a jump to a stub or trampoline)",
                             f"{RESULT}sites nop 0 call 0 jump {sites} other 0\n", rec.stdout)
        failures.check_equal(f"{name}: stderr", "", rec.stderr)
        rep = run_fixture.run([args.callmon, "report", "--format=json", "-d", data], args.work)
        if rep.returncode != 0:
            failures.add(f"{name}: report", run_fixture.describe(rep))
            continue
        got = {}
        for f in json.loads(rep.stdout).get("functions", []):
            key = f["name"].split("(")[0]
            got[key] = got.get(key, 0) + f["calls"]
        failures.check_equal(f"{name}: calls per function",
                             {k.split("(")[0]: v for k, v in counts.items()}, got)
        if args.mode == "pg":  # info counts the trampolines: every function got one
            info = run_fixture.run([args.callmon, "info", "--format=json", "-d", data], args.work)
            p = json.loads(info.stdout)["processes"][0] if info.returncode == 0 else {}
            failures.check_equal(f"{name}: info's -pg trampolines (given, kept mcount)",
                                 (sites, 0), (p.get("pg_trampolines"), p.get("pg_left")))
    return run_fixture.finish(failures)


if __name__ == "__main__":
    sys.exit(main())
