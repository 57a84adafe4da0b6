#!/usr/bin/env python3
"""An instrumented library dlmopen'ed into a new link namespace (tests/programs/dlmopen_main.c
loading dlopen_plugin.c as libcmplugin.so with LM_ID_NEWLM): its calls are not recorded (its
probes bind to the new namespace's own libc), and callmon must say so instead of dropping
them silently: `callmon record` warns at the end, `callmon info` lists it among the problems
(and in its JSON). The program's output and status are those of the plain run; the main
program's calls are recorded as ever.

  run_dlmopen.py --callmon build/bin/callmon --cc gcc --mode cyg|fentry|pg --work DIR
Exit status: 0 passed, 1 failed.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAMS = os.path.join(ROOT, "tests", "programs")
WANT_OUT = "namespace plugin result 10, after 20\n"
WANT_STATUS = 3


def main():
    a = run_fixture.program_test_args(__doc__, ["cyg", "fentry", "pg"])
    flags = ["-O2", "-g", "-I", PROGRAMS, *run_fixture.MODE_FLAGS[a.mode]]
    plugin = os.path.join(a.work, "libcmplugin.so")
    exe = os.path.join(a.work, "dlmopen")
    subprocess.run([a.cc, *flags, "-fPIC", "-shared", "-o", plugin,
                    os.path.join(PROGRAMS, "dlopen_plugin.c")], check=True)
    subprocess.run([a.cc, *flags, "-o", exe, os.path.join(PROGRAMS, "dlmopen_main.c"), "-ldl"],
                   check=True)
    problems = []
    plain = subprocess.run([exe], capture_output=True, text=True, timeout=60, cwd=a.work)
    if plain.returncode != WANT_STATUS or plain.stdout != WANT_OUT:
        # dlmopen unsupported here (a libc without namespaces): nothing to check.
        print(f"skipped: the plain run gave status {plain.returncode}, output "
              f"{plain.stdout!r}, stderr {plain.stderr[-300:]!r}")
        return 77
    data = os.path.join(a.work, "dlmopen.data")
    rec = subprocess.run([a.callmon, "record", "-o", data, "--", exe], capture_output=True,
                         text=True, timeout=120, cwd=a.work)
    if rec.returncode != WANT_STATUS or rec.stdout != WANT_OUT:
        problems.append(f"under callmon: status {rec.returncode}, output {rec.stdout!r}")
    sentence = ("1 module loaded with dlmopen into another namespace is not recorded: "
                + os.path.realpath(plugin))
    if sentence not in rec.stderr:
        problems.append(f"record's stderr does not say {sentence!r}: {rec.stderr[-800:]!r}")
    info = subprocess.run([a.callmon, "info", "--format=json", "-d", data], capture_output=True,
                          text=True, timeout=120, cwd=a.work)
    if info.returncode != 0:
        problems.append(f"info: status {info.returncode}, stderr {info.stderr[-500:]!r}")
    else:
        j = json.loads(info.stdout)
        if sentence not in j.get("problems", []):
            problems.append(f"info problems {j.get('problems')!r} lack {sentence!r}")
        listed = [m for p in j.get("processes", []) for m in p.get("dlmopen_modules", [])]
        if listed != [os.path.realpath(plugin)]:
            problems.append(f"info dlmopen_modules {listed!r}")
    text = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                          timeout=120, cwd=a.work)
    if sentence not in text.stdout:
        problems.append(f"info's text does not say it: {text.stdout[-800:]!r}")
    # The main program's calls are recorded; the namespace copy's are not (they cannot be).
    rep = subprocess.run([a.callmon, "report", "--format=json", "-d", data], capture_output=True,
                         text=True, timeout=120, cwd=a.work)
    names = {f["name"]: f["calls"] for f in json.loads(rep.stdout).get("functions", [])} \
        if rep.returncode == 0 else {}
    for fn in ("main", "load_in_namespace", "after_load"):
        if names.get(fn) != 1:
            problems.append(f"report: {fn} has {names.get(fn)} calls, expected 1 ({names})")
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
