#!/usr/bin/env python3
"""A gcc -fsanitize=address build (libasan.so linked dynamically) under callmon: ASan used
to refuse to start ("ASan runtime does not come first in initial library list", status 1)
because callmon's runtime was first in LD_PRELOAD. Now the program runs as without callmon
(status, the sum it prints), its 100 calls of work() are recorded, and the shell it starts
loads callmon's runtime but not libasan (which it did not have without callmon), and sees
no LD_PRELOAD, as without callmon.
In the patch mode (no flag, recorded with --patch=. --patch-module=., which names
libasan) the sanitizer's runtime is left unpatched and said so by `info`: patched, its
interceptors of the libc functions the runtime calls re-entered the probe until the stack
overflowed (SIGSEGV before main).

  run_asan_program.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|patch --work DIR
Exit status: 0 passed, 1 failed, 77 skipped (no libasan to link with).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "fentry", "patch"])
    exe = os.path.join(a.work, "asan_program")
    built = subprocess.run([a.cc, "-O1", "-g", "-fsanitize=address",
                            *run_fixture.MODE_FLAGS[a.mode],
                            os.path.join(ROOT, "tests", "programs", "asan_program.c"), "-o", exe],
                           capture_output=True, text=True)
    if built.returncode != 0:
        print("SKIP: cannot build with -fsanitize=address:\n" + built.stderr)
        return 77
    problems = []
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD",)
           and not k.startswith("CALLMON_")}
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=60, cwd=a.work, env=env)
    if plain.returncode != 0 or "sum 161700\nchild LD_PRELOAD=[]\n" != plain.stdout:
        problems.append(f"plain run: status {plain.returncode}, output {plain.stdout!r}")
    data = os.path.join(a.work, "asan.data")
    # Every module in the patch mode, libasan among them (MODE_RECORD_ARGS's \.so$ does not
    # match libasan.so.8).
    patch_all = ["--patch=.", "--patch-module=."] if a.mode == "patch" else []
    record = [a.callmon, "record", "-o", data] + patch_all
    rec = subprocess.run(record + ["--", exe], capture_output=True,
                         text=True, timeout=120, cwd=a.work, env=env)
    lines = rec.stdout.splitlines()
    if rec.returncode != plain.returncode or not lines or lines[0] != "sum 161700":
        problems.append(f"under callmon: status {rec.returncode}, output {rec.stdout!r}, "
                        f"stderr {rec.stderr!r}")
    child = [l for l in lines if l.startswith("child ")]
    if child != ["child LD_PRELOAD=[]", "child has libcallmon"]:
        problems.append(f"the shell's LD_PRELOAD and libraries: {child}")
    rep = subprocess.run([a.callmon, "report", "--format=json", "-d", data], capture_output=True,
                         text=True, timeout=60)
    calls = {}
    if rep.returncode == 0:
        for f in json.loads(rep.stdout).get("functions", []):
            calls[f["name"]] = calls.get(f["name"], 0) + f["calls"]
    if calls.get("work") != 100:
        problems.append(f"report: work() called {calls.get('work')} times, not 100 "
                        f"(status {rep.returncode}: {rep.stderr.strip()})")
    if a.mode == "patch":
        info = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                              timeout=60)
        said = [l for l in info.stdout.splitlines() if "libasan" in l]
        if not any("sanitizer" in l for l in said):
            problems.append(f"info does not say libasan was left unpatched: {said}")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
