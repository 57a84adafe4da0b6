#!/usr/bin/env python3
"""Arguments and return values recorded with -A/-R and --auto-args, shown by replay.

Builds tests/programs/args.cpp in one hook mode (fentry, pg, sled-fentry, patchable, xray;
cyg to check the refusal), records it with the rules below (or --auto-args), and checks that
- the program's output and exit status are those of a plain run;
- every call of a function with a rule shows exactly the expected arguments and return
  value in `callmon replay`: integers of each width and sign, hex, char, bool, float,
  double, C strings (whole, null, truncated, unreadable), std::string by reference and as a
  returned object, `this`, arguments passed on the stack, a recursive function (values per
  call), a function left by an exception (arguments, no return value), a thread;
- `callmon report` counts the same calls as a recording without arguments (the records do
  not disturb the call tree);
- in cyg mode (-finstrument-functions) one line on stderr says arguments cannot be recorded,
  and no call shows any.

Exit status: 0 passed, 1 failed, 77 skipped. Python stdlib only.
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
sys.path.insert(0, HERE)
import run_fixture  # noqa: E402  (MODE_FLAGS, run, describe)

RULES = [
    ("-A", "^add$@arg1/i32,arg2/i32"), ("-R", "^add$@retval/i32"),
    ("-A", "^scale$@arg1/i32,arg2/f64"), ("-R", "^scale$@retval/f64"),
    ("-A", "^halve$@arg1/f32"), ("-R", "^halve$@retval/f32"),
    ("-A", "^text_len$@arg1/s"), ("-R", "^text_len$@retval/u64"),
    ("-A", "^peek$@arg1/s,arg2/i32"),
    ("-A", "^many$@arg7,arg8/x64"), ("-R", "^many$"),
    ("-A", "^upper$@arg1/c,arg2/b"), ("-R", "^upper$@retval/c"),
    ("-A", "^narrow$@arg1/i8,arg2/i16,arg3/u16,arg4/u8"), ("-R", "^narrow$@retval/x32"),
    ("-A", "^fib$@arg1/i32"), ("-R", "^fib$@retval/i32"),
    ("-A", "^fails$@arg1/i32"), ("-R", "^fails$@retval/i32"),
    ("-A", "^str_size@arg1/S"), ("-R", "^str_size@retval/u64"),
    ("-A", "^greet@arg2/s"), ("-R", "^greet@retval/S"),
    ("-A", "Counter::get@this,arg2/i32"), ("-R", "Counter::get@retval/i32"),
    ("-A", "^worker$@arg1/p"),
]

THIS = "this=0x<addr>"
LONG = '"' + "x" * 80 + '"...'
# Function -> list of (arguments, return value or None) per call, in call order.
EXPECTED = {
    "add": [("-3, 4", "1")],
    "scale": [("3, 2.5", "7.5")],
    "halve": [("5", "2.5")],
    "text_len": [('"hello"', "5"), ("(null)", "0"), (LONG, "100")],
    "peek": [("(unreadable), 1", None)],
    "many": [("7, 0x100", "284")],
    "upper": [("'a', true", "'A'")],
    "narrow": [("-5, -300, 65000, 200", "0xfd7f")],
    "fib": "fib",  # checked call by call: at -O2 the compilers turn some calls into loops
    "fails": [("1", None)],
    "str_size": [('"tab\\there"', "8")],
    "greet": [('"bob"', '"hi bob"')],
    "Counter::get": [(f"{THIS}, 2", "42")],
    "worker": [("0x1234", None)],
}

# --auto-args: the same functions as DWARF declares them (every parameter, every return).
EXPECTED_AUTO = {
    "add": [("-3, 4", "1")],
    "scale": [("3, 2.5", "7.5")],
    "halve": [("5", "2.5")],
    "text_len": [('"hello"', "5"), ("(null)", "0"), (LONG, "100")],
    "peek": [("(unreadable), 1", "1")],
    "many": [("1, 2, 3, 4, 5, 6, 7, 256", "284")],
    "upper": [("'a', true", "'A'")],
    "narrow": [("'\\xfb', -300, 65000, '\\xc8'", "64895")],
    "fib": "fib",
    "fails": [("1", None)],
    "str_size": [('"tab\\there"', "8")],
    "greet": [('"bob"', '"hi bob"')],
    "Counter::get": [(f"{THIS}, 2", "42")],
    "worker": [("0x1234", "0x1234")],
}

# A replay line: duration | indent NAME(ARGS) {   or   NAME(ARGS)[ = RET];[ mark]
CALL = re.compile(r"^\s*[^|]*\| (?P<indent> *)(?P<name>[^ (][^(]*?)\((?P<args>.*?)\)"
                  r"(?: const)?(?P<open> \{)?(?: = (?P<ret>.*?))?;?(?P<mark> \[[a-z]+\])?$")
CLOSE = re.compile(r"^\s*[^|]*\| (?P<indent> *)\}(?: = (?P<ret>.*?))?;? /\* (?P<name>.*?)\(.*\)"
                   r" \*/(?P<mark> \[[a-z]+\])?$")


C_NAMES = ["add", "scale", "halve", "text_len", "peek", "many", "upper", "narrow", "fib", "fails",
           "worker"]


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def check_fib(calls):
    """The first call is fib(4) = 3, and every recorded call returned fib of its argument."""
    if not calls or calls[0] != ("4", "3"):
        return False
    return all(a.isdigit() and r == str(fib(int(a))) for a, r in calls)


def parse_replay(text):
    """Returns {function: [(args, ret), ...]} in call order. A call that opens a block gets
    its return value from its closing line."""
    calls = {}
    open_stack = []
    for line in text.splitlines():
        if line.startswith("#") or "|" not in line:
            continue
        m = CLOSE.match(line)
        if m:
            if open_stack:
                entry = open_stack.pop()
                entry[1] = m.group("ret")
            continue
        m = CALL.match(line)
        if not m:
            continue
        name = m.group("name").strip().replace("[abi:cxx11]", "")
        args = re.sub(r"this=0x[0-9a-f]+", "this=0x<addr>", m.group("args"))
        entry = [args, m.group("ret")]
        calls.setdefault(name, []).append(entry)
        if m.group("open"):
            open_stack.append(entry)
    return {k: [tuple(e) for e in v] for k, v in calls.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--compiler", default="gcc")
    ap.add_argument("--mode", required=True, choices=["cyg", "pg", "fentry", "sled-fentry",
                                                      "patchable", "xray"])
    ap.add_argument("--opt", default="O2")
    ap.add_argument("--auto-args", action="store_true", help="record with --auto-args")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    if not shutil.which(args.cxx) and not os.path.exists(args.cxx):
        print(f"SKIP: {args.cxx} not found")
        return 77
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    work = args.work
    program = os.path.join(work, "args")
    cmd = [args.cxx, f"-{args.opt}", "-g", "-Wall", "-pthread"] + run_fixture.MODE_FLAGS[args.mode]
    cmd += ["-o", program, os.path.join(PROGRAMS, "args.cpp")]
    proc = run_fixture.run(cmd, work)
    if proc.returncode != 0:
        print("building the fixture failed\n" + run_fixture.describe(proc))
        return 1
    failures = []
    plain = run_fixture.run([program, "1"], work)

    def record(data, extra):
        return run_fixture.run([args.callmon, "record", "--no-libcall", "-o", data] + extra + ["--", program, "1"],
                               work)

    rules = ["--auto-args"] if args.auto_args else sum(([o, v] for o, v in RULES), [])
    data = os.path.join(work, "with.data")
    rec = record(data, rules)
    if rec.returncode != plain.returncode or rec.stdout != plain.stdout:
        failures.append("the program's output or status changed under record:\n"
                        + run_fixture.describe(rec) + "\nplain:\n" + run_fixture.describe(plain))
    warned = [ln for ln in rec.stderr.splitlines() if "cannot be recorded" in ln]
    if args.mode == "cyg":
        if len(warned) != 1:
            failures.append(f"expected one line saying arguments cannot be recorded, got:\n{rec.stderr}")
    elif warned:
        failures.append(f"unexpected warning in mode {args.mode}:\n{rec.stderr}")

    replay = run_fixture.run([args.callmon, "replay", "--demangle=full", "-d", data, "--no-compensation"], work)
    if replay.returncode != 0:
        failures.append("replay failed\n" + run_fixture.describe(replay))
    got = parse_replay(replay.stdout)
    expected = EXPECTED_AUTO if args.auto_args else EXPECTED
    if args.mode == "cyg":
        # Calls without values: C names show "name()" (C++ ones show their parameter types).
        for fn in C_NAMES:
            seen = got.get(fn)
            if not seen or any(c != ("", None) for c in seen):
                failures.append(f"{fn}: expected calls without values, got {seen}")
    for fn, want in ({} if args.mode == "cyg" else expected).items():
        seen = got.get(fn)
        ok = check_fib(seen) if want == "fib" else seen == want
        if not ok:
            failures.append(f"{fn}: expected {want}\n  got {seen}")

    # The same calls as a recording without arguments.
    bare = os.path.join(work, "bare.data")
    record(bare, [])
    counts = []
    for d in (data, bare):
        rep = run_fixture.run([args.callmon, "report", "-d", d, "--format=json"], work)
        try:
            counts.append(sorted((f["name"], f["calls"]) for f in json.loads(rep.stdout)["functions"]))
        except (ValueError, KeyError) as e:
            failures.append(f"report --format=json failed ({e}):\n" + run_fixture.describe(rep))
            counts.append(None)
    if counts[0] != counts[1]:
        failures.append(f"call counts differ with arguments recorded:\n  {counts[0]}\n  {counts[1]}")

    if failures:
        print("FAILED\n" + "\n".join(failures))
        print("--- replay ---\n" + replay.stdout[:6000])
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
