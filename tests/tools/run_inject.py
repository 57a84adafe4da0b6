#!/usr/bin/env python3
"""End-to-end test of `callmon inject` on tests/programs/inject_demo.cpp, built with one
compiler at one -O level in one hook mode (cyg: -finstrument-functions, fentry: -pg
-mfentry, xray: clang's XRay sleds). The program prints what every call gave; the checks are that exactly the calls
the config names saw exactly the error it asks for:
  - `open_db call=3 throw system_error ENOENT "no database"`: only the 3rd call throws,
    the program catches std::system_error with ENOENT and the message;
  - `step first=2 throw logic_error`, then `step prob=0.3 seed=11 throw bad_alloc`: calls 1
    and 2 get the logic_error; of the others exactly those the seeded draw picks (computed
    here the same way) get bad_alloc, and a second run picks the same;
  - `lookup call=2 errno EACCES`: the 2nd lookup returns its normal value with errno EACCES;
  - the log names rule, function, thread and call number of each injection (--log FILE);
  - fentry and xray (the hook at the first instruction): `answer every return 7` makes
    answer() return 7 without running; cyg: the same rule is refused before the program
    starts, naming the config line;
  - a bad config line fails before the program runs, naming file and line.
Exit 0 passed, 1 failed."""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

M64 = (1 << 64) - 1


def mix64(x):
    """inject_trigger.hpp's mix64 (SplitMix64 finalizer)."""
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def draw(seed, call):
    return (mix64(mix64(seed) ^ call) >> 11) / float(1 << 53)


CONFIG = """# tests/tools/run_inject.py
open_db call=3 throw system_error ENOENT "no database"
step first=2 throw logic_error "first two"
step prob=0.3 seed=11 throw bad_alloc   # counts every step call, acts where the first did not
lookup call=2 errno EACCES
"""


def expected_stdout(answer):
    lines = []
    for i in range(1, 6):
        if i == 3:
            lines.append("open_db 3: system_error ENOENT: no database: No such file or directory")
        else:
            lines.append(f"open_db {i} -> {i}")
    for i in range(1, 4):
        lines.append(f"lookup {i} -> {2 * i} errno {'EACCES' if i == 2 else '0'}")
    lines.append(f"answer -> {answer}")
    for i in range(1, 21):
        if i <= 2:
            lines.append(f"step {i}: logic_error first two")
        elif draw(11, i) < 0.3:
            lines.append(f"step {i}: bad_alloc")
    return "\n".join(lines) + "\n"


def log_lines(text):
    """The log lines, with the thread id replaced by TID."""
    return [re.sub(r"thread \d+", "thread TID", l) for l in text.splitlines() if l.strip()]


INLINED_CPP = r"""
#include <cstdio>
#include <stdexcept>
static volatile int never;
// Always inlined into main: no copy of its own is ever called.
__attribute__((always_inline)) static inline int tiny(int x) {
  if (never) throw std::runtime_error("never");
  return x + 1;
}
int main() {
  int sum = 0;
  try {
    for (int i = 0; i < 3; ++i) sum += tiny(i);
  } catch (...) {
    sum = -1;
  }
  std::printf("%d\n", sum);
  return 0;
}
"""


def check_idle_rules(args, f):
    """Rules that can act on nothing are named at start-up, with the reason; a throw into an
    inlined copy (-finstrument-functions keeps its hooks) is refused with what to do."""
    src = os.path.join(args.work, "inlined.cpp")
    with open(src, "w") as c:
        c.write(INLINED_CPP)
    prog = os.path.join(args.work, "inlined")
    cmd = [args.cxx, f"-{args.opt}", "-g", *common.MODE_FLAGS[args.mode], "-o", prog, src]
    if args.compiler == "clang":
        cmd.append("-lstdc++")
    subprocess.run(cmd, check=True)
    config = os.path.join(args.work, "idle.conf")
    with open(config, "w") as c:
        c.write("no_such_function_xyz every throw runtime_error\ntiny every throw runtime_error\n")
    r = common.run([args.callmon, "inject", "--config", config, "--", prog], args.work)
    f.check("idle rules: the program runs as without callmon", (0, "6\n"),
            (r.returncode, r.stdout))
    lines = r.stderr.splitlines()
    f.check_true("a rule matching nothing is named at start-up",
                 any(l.startswith(f"callmon inject: warning: {config}:1: rule "
                                  "'no_such_function_xyz' matches no function of inlined")
                     for l in lines), r.stderr)
    if args.mode == "cyg":
        # The hooks of the inlined copies fire with tiny's address; the throw is refused.
        f.check_true("a throw into an inlined copy says so and what to do",
                     any("not injected" in l and "tiny" in l and "inlined into main" in l and
                         "noinline" in l for l in lines), r.stderr)
    else:
        f.check_true("a rule matching only inlined copies is named at start-up",
                     any(l.startswith(f"callmon inject: warning: {config}:2: rule 'tiny' "
                                      "matches only inlined copies of tiny") for l in lines),
                     r.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common.add_common_args(ap)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    f = common.Failures()
    prog = common.build(args, "inject_demo.cpp", os.path.join(args.work, "inject_demo"))
    at_entry = args.mode in ("fentry", "xray")  # the entry hook at the first instruction

    plain = common.run([prog], args.work)
    want_plain = "".join(f"open_db {i} -> {i}\n" for i in range(1, 6))
    want_plain += "".join(f"lookup {i} -> {2 * i} errno 0\n" for i in range(1, 4))
    want_plain += "answer -> 42\n"
    f.check("plain run: status and stdout (no error path)", (0, want_plain),
            (plain.returncode, plain.stdout))

    config = os.path.join(args.work, "inject.conf")
    with open(config, "w") as c:
        c.write(CONFIG + ("answer every return 7\n" if at_entry else ""))
    want = expected_stdout(7 if at_entry else 42)
    logs = []
    for attempt in (1, 2):
        log = os.path.join(args.work, f"inject{attempt}.log")
        r = common.run([args.callmon, "inject", "--config", config, "--log", log, "--", prog],
                       args.work)
        f.check(f"run {attempt}: status and stdout", (0, want), (r.returncode, r.stdout))
        f.check(f"run {attempt}: nothing on stderr", "", r.stderr)
        logs.append(log_lines(open(log).read()) if os.path.exists(log) else [])
    f.check("the second run injects the same calls", logs[0], logs[1])
    expect_log = {
        "callmon inject: line 2: open_db call=3 throw system_error ENOENT: open_db(int) thread TID call 3",
        "callmon inject: line 3: step first=2 throw logic_error: step(int) thread TID call 1",
        "callmon inject: line 3: step first=2 throw logic_error: step(int) thread TID call 2",
        "callmon inject: line 5: lookup call=2 errno EACCES: lookup(int) thread TID call 2",
    }
    expect_log |= {f"callmon inject: line 4: step prob=0.3 seed=11 throw bad_alloc: step(int) "
                   f"thread TID call {i}" for i in range(3, 21) if draw(11, i) < 0.3}
    if at_entry:
        expect_log.add("callmon inject: line 6: answer every return 7: answer() thread TID call 1")
    f.check("log of the injections", sorted(expect_log), sorted(logs[0]))

    if args.mode == "cyg":
        # A return-value rule is refused before the program starts.
        with open(config, "a") as c:
            c.write("answer every return 7\n")
        r = common.run([args.callmon, "inject", "--config", config, "--", prog], args.work)
        f.check("return rule in -finstrument-functions mode: status, stdout", (2, ""),
                (r.returncode, r.stdout))
        f.check_true("return rule refusal names the line and the mode",
                     r.stderr.startswith(f"callmon inject: error: {config}:6: a return-value rule "
                                         "needs a program built with -pg -mfentry")
                     and "-finstrument-functions" in r.stderr and r.stderr.count("\n") == 1,
                     repr(r.stderr))
    check_idle_rules(args, f)
    bad = os.path.join(args.work, "bad.conf")
    with open(bad, "w") as c:
        c.write("# ok\nopen_db call=3 throw system_error ENOENT\nstep sometimes throw bad_alloc\n")
    r = common.run([args.callmon, "inject", "--config", bad, "--", prog], args.work)
    f.check("bad config line", (2, "", f"callmon inject: error: {bad}:3: unknown trigger "
                                "'sometimes' (every, call=N, first=N or prob=P [seed=S])\n"),
            (r.returncode, r.stdout, r.stderr))
    return f.finish()


if __name__ == "__main__":
    sys.exit(main())
