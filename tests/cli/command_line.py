#!/usr/bin/env python3
"""The command line as a user meets it (issue 22, item 7), one case per shape:

- everything after `--` is the program's, whatever option comes last before it: each
  command that runs a program, after each of its options that take several values
  (CLI11 lets such an option end its list with `--` and used to eat it, so `-n` went to
  callmon: "The following argument was not expected: -n");
- `graph NOSUCHFUNC` says there is no such function and exits non-zero;
- `html` and `export` without -o write a file named after the recording in the working
  directory and say so;
- `monitor` without -o keeps its table out of the program's standard output;
- `dump` names the function of each record;
- `info` shows the machine and the run's resource use.
Exit 0 passed, 1 failed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import check, summary  # noqa: E402


ARGS_C = r"""
#include <stdio.h>
__attribute__((noinline)) static void show(const char* a) { printf("[%s]", a); }
int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) show(argv[i]);
  printf("\n");
  return 0;
}
"""

DAEMON_C = r"""
#include <unistd.h>
__attribute__((noinline)) long work(long i) { return i * 3 + 1; }
int main(void) {
  long s = 0;
  for (int i = 0; i < 100; i++) s += work(i);
  if (fork() > 0) return 0;
  setsid();
  if (fork() > 0) _exit(0);
  for (int k = 0; k < 15; k++) {
    for (int i = 0; i < 100; i++) s += work(i);
    usleep(100000);
  }
  return s == 0;
}
"""


def run(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--profiler", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    w = a.work
    with open(os.path.join(w, "args.c"), "w") as f:
        f.write(ARGS_C)
    subprocess.run([a.cc, "-O1", "-g", "-finstrument-functions", "-o", "args", "args.c"],
                   cwd=w, check=True)
    subprocess.run([a.callmon, "record", "-o", "base.data", "--", "./args", "x"], cwd=w,
                   check=True, capture_output=True)
    with open(os.path.join(w, "rules.txt"), "w") as f:
        f.write("no_such_function_xyz call=1 errno ENOENT\n")
    want = "[-n][hi][--][-x]"
    program = ["--", "./args", "-n", "hi", "--", "-x"]

    # (case, callmon arguments before `--`)
    shapes = [
        ("record --include (last before --)", ["record", "-o", "r1.data", "--include", "main"]),
        ("record --exclude", ["record", "-o", "r2.data", "--exclude", "nothing"]),
        ("record -A", ["record", "-o", "r3.data", "-A", "show@arg1"]),
        ("record -R", ["record", "-o", "r4.data", "-R", "show"]),
        ("record, no option before --", ["record", "-o", "r5.data"]),
        ("trace --include", ["trace", "--include", "main"]),
        ("trace --exclude", ["trace", "--exclude", "nothing"]),
        ("monitor --select one pattern", ["monitor", "-o", "m1.txt", "--select", "main"]),
        ("monitor --select two patterns", ["monitor", "-o", "m2.txt", "--select", "main", "show"]),
        ("coverage --merge", ["coverage", "-o", "c1.txt", "--merge", "base.data"]),
        ("coverage --fail-under", ["coverage", "-o", "c2.txt", "--fail-under", "0"]),
        ("run --monitor-option", ["run", "--monitor", a.profiler, "--monitor-option",
                                  "output=prof.txt"]),
        ("run --monitor-option twice", ["run", "--monitor", a.profiler, "--monitor-option",
                                        "output=prof2.txt", "--monitor-option", "x=y"]),
        ("inject --log", ["inject", "-c", "rules.txt", "--log", "inject.log"]),
    ]
    for name, before in shapes:
        r = run([a.callmon] + before + program, w)
        check(f"-- after {name}: the program gets -n, hi, --, -x",
              r.returncode == 0 and r.stdout.strip() == want,
              f"status {r.returncode}\nstdout: {r.stdout}\nstderr: {r.stderr[-600:]}")

    # Positionals before `--` stay the program's first words.
    r = run([a.callmon, "record", "-o", "r6.data", "./args", "-n", "--", "hi"], w)
    check("record ./args -n -- hi: is an error or runs ./args -n hi",
          r.returncode != 0 or r.stdout.strip() == "[-n][hi]", r.stdout + r.stderr)
    r = run([a.callmon, "record", "-o", "r7.data", "./args", "--", "-n"], w)
    check("record ./args -- -n: runs ./args -n", r.returncode == 0 and
          r.stdout.strip() == "[-n]", r.stdout + r.stderr)
    # A command without a program still refuses what follows `--`.
    r = run([a.callmon, "report", "-d", "base.data", "--", "-n"], w)
    check("report -- -n: an error", r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1,
          r.stderr)
    # -- with nothing after it: the program is still missing.
    # --min-duration takes a unit as --time-range does (250us, 1.5ms, 2s), in record and in
    # the reading commands; plain numbers are ns.
    r = run([a.callmon, "record", "-o", "d1.data", "--min-duration=10s", "--", "./args", "x"], w)
    calls = run([a.callmon, "info", "--format=json", "-d", "d1.data"], w)
    check("record --min-duration=10s: every call shorter, none recorded",
          r.returncode == 0 and calls.returncode == 0 and json.loads(calls.stdout)["calls"] == 0,
          r.stderr + calls.stderr)
    for value, kept in (("10s", False), ("1ns", True), ("1", True)):
        r = run([a.callmon, "report", "--format=json", "-d", "base.data",
                 "--min-duration=" + value], w)
        names = [f["name"] for f in json.loads(r.stdout)["functions"]] if r.returncode == 0 else None
        check(f"report --min-duration={value}: show {'kept' if kept else 'dropped'}",
              names is not None and ("show" in names) == kept, r.stderr)
    r = run([a.callmon, "record", "-o", "d3.data", "--min-duration=7200s", "--", "./args"], w)
    check("record --min-duration=7200s: exit 2, one line with the bounds",
          r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and
          "from 1ns to 3600s" in r.stderr, r.stderr)
    for cmd in (["record", "-o", "d2.data", "--min-duration=5xs", "--", "./args"],
                ["report", "-d", "base.data", "--min-duration=1.2.3ms"]):
        r = run([a.callmon] + cmd, w)
        check(f"{cmd[0]} --min-duration with a bad unit: exit 2, one line",
              r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and
              "bad duration" in r.stderr, r.stderr)

    r = run([a.callmon, "record", "-o", "r8.data", "--"], w)
    check("record -- (no program): an error", r.returncode != 0, r.stderr)

    # graph of a function that is not there.
    r = run([a.callmon, "graph", "-d", "base.data", "NOSUCHFUNC"], w)
    check("graph NOSUCHFUNC: exit non-zero, one line naming it",
          r.returncode != 0 and "NOSUCHFUNC" in r.stderr and r.stdout == "" and
          len(r.stderr.strip().splitlines()) == 1, f"{r.returncode} {r.stdout} {r.stderr}")
    r = run([a.callmon, "graph", "-d", "base.data", "show"], w)
    check("graph show: found", r.returncode == 0 and "show" in r.stdout, r.stderr)

    # html and export without -o.
    r = run([a.callmon, "html", "-d", "base.data"], w)
    path = os.path.join(w, "base.html")
    check("html without -o: base.html, said on stderr",
          r.returncode == 0 and os.path.exists(path) and "base.html" in r.stderr,
          f"{r.returncode} {r.stderr}")
    for fmt, name in [("chrome", "base.chrome.json"), ("folded", "base.folded"),
                      ("speedscope", "base.speedscope.json"), ("callgrind", "callgrind.out.base")]:
        r = run([a.callmon, "export", "-d", "base.data/", "--format", fmt], w)
        check(f"export --format {fmt} without -o: {name}",
              r.returncode == 0 and os.path.exists(os.path.join(w, name)) and name in r.stderr,
              f"{r.returncode} {r.stderr}")
    r = run([a.callmon, "export", "-d", "base.data", "--format", "folded", "-o", "-"], w)
    check("export -o -: standard output, nothing said", r.returncode == 0 and "main" in r.stdout
          and "wrote" not in r.stderr, r.stderr)

    # monitor without -o: the program's stdout is its own.
    r = run([a.callmon, "monitor", "--", "./args", "a"], w)
    check("monitor without -o: the table on stderr, stdout is the program's",
          r.returncode == 0 and r.stdout.strip() == "[a]" and "functions hit" in r.stderr,
          f"stdout: {r.stdout}\nstderr: {r.stderr}")
    r = run([a.callmon, "monitor", "-o", "-", "--", "./args", "a"], w)
    check("monitor -o -: the table on stdout", "functions hit" in r.stdout, r.stdout)
    # A stripped program: a hint of --all-modules and --select.
    subprocess.run(["strip", "-o", "args.stripped", "args"], cwd=w, check=True)
    r = run([a.callmon, "monitor", "--", "./args.stripped"], w)
    check("monitor of a stripped program: hints --all-modules and --select",
          "--all-modules" in r.stderr and "--select" in r.stderr, r.stderr)

    # dump names the functions.
    r = run([a.callmon, "dump", "-d", "base.data"], w)
    check("dump: enter records name their function",
          r.returncode == 0 and any(l.startswith("enter ") and "fn=show" in l
                                    for l in r.stdout.splitlines()), r.stdout[:800])

    # info shows the machine and the run, as recorded by record (issue 22, item 8).
    r = run([a.callmon, "info", "-d", "base.data"], w)
    check("info: machine, system and usage lines",
          r.returncode == 0 and "\nmachine:" in r.stdout and "\nsystem:" in r.stdout and
          "load average" in r.stdout and "max RSS" in r.stdout and "page faults" in r.stdout
          and "context switches" in r.stdout, r.stdout)
    r = run([a.callmon, "info", "-d", "base.data", "--format", "json"], w)
    info = json.loads(r.stdout) if r.returncode == 0 else {}
    check("info --format json: machine and usage objects",
          (info.get("machine") or {}).get("cpus_online", 0) >= 1 and
          (info.get("usage") or {}).get("max_rss_kib", 0) > 0, r.stdout[:600])

    # --help on every command: exit 0, usage shown, negated flags rendered as plain flags
    # (CLI11 printed `--no-libcall{false}` for a flag bound to a bool it clears).
    for cmd in ["coverage", "diff", "dump", "export", "graph", "html", "info", "inject",
                "monitor", "record", "replay", "report", "run", "trace", "tui"]:
        r = run([a.callmon, cmd, "--help"], w)
        check(f"{cmd} --help: usage, no {{false}} defaults",
              r.returncode == 0 and "Usage:" in r.stdout and "{false}" not in r.stdout,
              r.stdout[-800:] + r.stderr)

    # The program's environment is the one it has without callmon: no CALLMON_* variable,
    # no libcallmon.so in LD_PRELOAD, and `_` (the shell's "command run") naming the program,
    # not callmon. Started from bash, which sets `_`. (No LD_PRELOAD of the test's own: the
    # sanitized build's runtime needs libasan first, which one would displace.)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLMON_")}
    for cmd, extra in (("record", ["-o", "env.data"]), ("trace", ["-o", "env.trace"])):
        alone = subprocess.run(["bash", "-c", "env"], cwd=w, env=env, capture_output=True,
                               text=True, timeout=60)
        under = subprocess.run(["bash", "-c", '"$0" "$@"', a.callmon, cmd, *extra, "--", "env"],
                               cwd=w, env=env, capture_output=True, text=True, timeout=60)
        got, want_env = sorted(under.stdout.splitlines()), sorted(alone.stdout.splitlines())
        check(f"{cmd} -- env: prints what env prints alone",
              under.returncode == 0 and got == want_env and "_=" + shutil.which("env") in got,
              f"only under callmon: {sorted(set(got) - set(want_env))}, only alone: "
              f"{sorted(set(want_env) - set(got))} {under.stderr[-300:]}")
        under = subprocess.run([a.callmon, cmd, *extra, "--", "env", "-i", "A=1", "env"], cwd=w,
                               env=env, capture_output=True, text=True, timeout=60)
        check(f"{cmd} -- env -i A=1 env: prints A=1 only",
              under.returncode == 0 and under.stdout == "A=1\n", under.stdout + under.stderr)

    # A daemon that outlives `record` (fork, setsid, fork) goes on writing the recording:
    # info says so while it runs (it said "problems: none" on the partial data), and not
    # once it has ended.
    with open(os.path.join(w, "daemon.c"), "w") as f:
        f.write(DAEMON_C)
    subprocess.run([a.cc, "-O1", "-finstrument-functions", "-o", "daemon", "daemon.c"], cwd=w,
                   check=True)
    # Not through pipes: the daemon would hold them open, and the wait for their end would
    # last as long as it does.
    subprocess.run([a.callmon, "record", "-o", "daemon.data", "--", "./daemon"], cwd=w,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    r = run([a.callmon, "info", "-d", "daemon.data"], w)
    check("info while a daemon still records: says it is still running",
          "is still running and recording" in r.stdout, r.stdout[-600:])
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        r = run([a.callmon, "info", "-d", "daemon.data"], w)
        if "still running" not in r.stdout:
            break
        time.sleep(0.2)
    check("info once the daemon has ended: no problem", "problems:  none" in r.stdout,
          r.stdout[-600:])

    # A statically linked program started by the recorded one (a shell here) cannot be
    # followed (no dynamic loader to load the runtime): said once, the output unchanged.
    with open(os.path.join(w, "static_child.c"), "w") as f:
        f.write('#include <stdio.h>\nint main(void) { puts("static child"); return 0; }\n')
    built = subprocess.run([a.cc, "-O1", "-static", "-o", "static_child", "static_child.c"],
                           cwd=w, capture_output=True)
    if built.returncode == 0:
        r = run([a.callmon, "record", "-o", "static.data", "--", "sh", "-c", "./static_child"], w)
        check("a static program started by the recorded one: said, output unchanged",
              r.returncode == 0 and r.stdout == "static child\n" and
              "static_child is statically linked" in r.stderr, r.stdout + r.stderr)

    # callmon inside a recorded program (its own test suite, build scripts): the inner
    # trace's program is the inner callmon's; the outer recording's variables used to reach
    # it and record it there, and the trace printed nothing.
    alone = run([a.callmon, "trace", "--", "./args", "x"], w)
    nested = run([a.callmon, "record", "-o", "outer.data", "--", a.callmon, "trace", "--",
                  "./args", "x"], w)
    def calls(text):  # the trace's lines without their "[pid]" prefix
        return [l.split("]", 1)[1] for l in text.splitlines() if l.startswith("[") and "()" in l]

    check("trace inside record: the inner trace shows its program's calls",
          calls(alone.stderr) and calls(nested.stderr) == calls(alone.stderr),
          nested.stdout + nested.stderr[-600:])

    return summary()


if __name__ == "__main__":
    sys.exit(main())
