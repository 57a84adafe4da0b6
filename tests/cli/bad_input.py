#!/usr/bin/env python3
"""Bad input across the CLI: every subcommand given a missing, empty, corrupt, truncated or
wrong-version recording, or wrong options, must answer with exactly one line on stderr and a
non-zero exit status: never a crash (signal), a hang (20 s), or a multi-line error.

The cases are a table (CASES). `--doc FILE` writes docs/bad-input.md from the actual
outputs (paths of the scratch directory shown as WORK). Exit 0 passed, 1 failed.
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(os.path.dirname(HERE), "programs")
READERS = ["report", "replay", "info", "dump", "graph", "tui"]
HELPERS = []  # processes to kill at the end


def make_recordings(callmon, cc, work):
    """A good recording of fib and damaged copies of it; returns {name: dir}."""
    subprocess.run([cc, "-O2", "-finstrument-functions", "-I", PROGRAMS, "-o",
                    os.path.join(work, "fib"), os.path.join(PROGRAMS, "fib.c")], check=True)
    good = os.path.join(work, "good")
    subprocess.run([callmon, "record", "-o", good, "--", "./fib"], cwd=work, check=True,
                   capture_output=True)
    dirs = {"good": good}

    def copy(name):
        d = os.path.join(work, name)
        shutil.copytree(good, d)
        return d

    def files(d, ext):
        return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(ext))

    empty = os.path.join(work, "empty")
    os.makedirs(empty)
    dirs["empty"] = empty
    d = dirs["events_zero"] = copy("events_zero")
    open(files(d, ".events")[0], "w").close()
    d = dirs["events_bad_magic"] = copy("events_bad_magic")
    with open(files(d, ".events")[0], "r+b") as f:
        f.write(b"NOTATHRD")
    d = dirs["events_version"] = copy("events_version")
    with open(files(d, ".events")[0], "r+b") as f:
        f.seek(8)
        f.write(struct.pack("<I", 99))
    d = dirs["events_short_header"] = copy("events_short_header")
    with open(files(d, ".events")[0], "r+b") as f:
        f.truncate(100)
    d = dirs["meta_version"] = copy("meta_version")
    meta = files(d, ".meta")[0]
    text = open(meta).read().split("\n", 1)
    open(meta, "w").write("callmon-process 99\n" + text[1])
    d = dirs["meta_garbage"] = copy("meta_garbage")
    open(files(d, ".meta")[0], "wb").write(b"\x00\xff garbage\n")
    d = dirs["session_corrupt"] = copy("session_corrupt")
    open(os.path.join(d, "session.json"), "w").write("{not json")
    d = dirs["session_version"] = copy("session_version")
    s = open(os.path.join(d, "session.json")).read().replace('"version": 1', '"version": 99')
    open(os.path.join(d, "session.json"), "w").write(s)
    # FIFOs where the files should be: opening one for reading waits for a writer.
    d = dirs["events_fifo"] = copy("events_fifo")
    ev = files(d, ".events")[0]
    os.remove(ev)
    os.mkfifo(ev)
    d = dirs["meta_fifo"] = copy("meta_fifo")
    meta = files(d, ".meta")[0]
    os.remove(meta)
    os.mkfifo(meta)
    d = dirs["session_fifo"] = copy("session_fifo")
    os.remove(os.path.join(d, "session.json"))
    os.mkfifo(os.path.join(d, "session.json"))
    d = dirs["no_meta"] = copy("no_meta")
    for m in files(d, ".meta"):
        os.remove(m)
    d = dirs["only_session"] = copy("only_session")
    for m in files(d, ".meta") + files(d, ".events"):
        os.remove(m)
    a_file = os.path.join(work, "a_file")
    open(a_file, "w").write("x\n")
    dirs["a_file"] = a_file
    dirs["missing"] = os.path.join(work, "missing")
    # Shared objects for `callmon run --monitor`: one without the factory, one with the
    # factory of another API version, one with the right name (it is never loaded).
    for name, body in [("no_factory", "int f(void) { return 0; }"),
                       ("factory_v2", "void* callmon_monitor_create_v2(void) { return 0; }"),
                       ("factory_v1", "void* callmon_monitor_create_v1(void) { return 0; }")]:
        src = os.path.join(work, name + ".c")
        open(src, "w").write(body + "\n")
        dirs[name] = os.path.join(work, name + ".so")
        subprocess.run([cc, "-shared", "-fPIC", "-o", dirs[name], src], check=True)
    dirs["not_a_recording"] = os.path.join(work, "not_a_recording")
    os.makedirs(dirs["not_a_recording"])
    open(os.path.join(dirs["not_a_recording"], "notes.txt"), "w").write("mine\n")
    not_elf = dirs["not_elf"] = os.path.join(work, "not_elf")
    open(not_elf, "w").write("garbage, not a program\n")
    os.chmod(not_elf, 0o755)
    # Configs for `callmon inject`: a bad line, no rules, a return value (not possible in
    # the -finstrument-functions build of fib).
    for name, text in [("bad_conf", "# rules\nfib every throw runtime_error\nfib sometimes errno EIO\n"),
                       ("empty_conf", "# nothing\n"),
                       ("return_conf", "fib call=1 return 0\n"),
                       ("good_conf", "fib call=1 errno EIO\n")]:
        dirs[name] = os.path.join(work, name.replace("_conf", ".conf"))
        open(dirs[name], "w").write(text)
    dirs["fib"] = os.path.join(work, "fib")
    # fib linked with -static: no dynamic loader, so no LD_PRELOAD: refused before it runs.
    dirs["static_fib"] = os.path.join(work, "static_fib")
    subprocess.run([cc, "-O2", "-static", "-finstrument-functions", "-I", PROGRAMS, "-o",
                    dirs["static_fib"], os.path.join(PROGRAMS, "fib.c")], check=True)
    # A process already traced (by its parent, through PTRACE_TRACEME): `monitor -p` on it
    # must be refused by the kernel, which is how "not permitted to ptrace" is simulated.
    HELPERS.append(subprocess.Popen([sys.executable, "-c", "import ctypes, time; "
                                     "ctypes.CDLL(None).ptrace(0, 0, 0, 0); time.sleep(120)"]))
    dirs["traced_pid"] = str(HELPERS[-1].pid)
    return dirs


def cases(dirs):
    """(description, argv after `callmon`) of every case."""
    out = []
    kinds = [("missing directory", "missing"), ("a regular file, not a directory", "a_file"),
             ("empty directory", "empty"), ("thread file of 0 bytes", "events_zero"),
             ("thread file with a wrong magic", "events_bad_magic"),
             ("thread file of format version 99", "events_version"),
             ("thread file cut inside its header", "events_short_header"),
             ("process file of version 99", "meta_version"),
             ("process file of binary garbage", "meta_garbage"),
             ("session.json not JSON", "session_corrupt"),
             ("session.json of version 99", "session_version"),
             ("thread file a FIFO", "events_fifo"), ("process file a FIFO", "meta_fifo"),
             ("session.json a FIFO", "session_fifo"),
             ("thread files without process files", "no_meta"),
             ("session.json alone", "only_session")]
    # How each reading command is given a recording.
    readers = {cmd: (lambda d, cmd=cmd: [cmd, "-d", d]) for cmd in READERS}
    readers["export"] = lambda d: ["export", "--format=folded", "-o",
                                   os.path.join(os.path.dirname(d), "out.folded"), "-d", d]
    readers["diff"] = lambda d: ["diff", dirs["good"], d]
    readers["coverage"] = lambda d: ["coverage", "-d", d]
    readers["html"] = lambda d: ["html", "-o", os.path.join(os.path.dirname(d), "out.html"),
                                 "-d", d]
    for cmd, argv in readers.items():
        for what, key in kinds:
            out.append((f"{cmd}: {what}", argv(dirs[key])))
    for cmd in list(readers) + ["record", "monitor", "run", "trace", "inject"]:
        out.append((f"{cmd}: unknown option", [cmd, "--no-such-option"]))
    out += [
        ("report: unknown sort key", ["report", "--sort=nope", "-d", dirs["good"]]),
        ("report: unknown format", ["report", "--format=xml", "-d", dirs["good"]]),
        ("report: --per-thread with --per-process",
         ["report", "--per-thread", "--per-process", "-d", dirs["good"]]),
        ("report: --limit not a number", ["report", "--limit=x", "-d", dirs["good"]]),
        ("replay: --max-depth not a number", ["replay", "--max-depth=x", "-d", dirs["good"]]),
        ("replay: unknown thread", ["replay", "--thread", "999999999", "-d", dirs["good"]]),
        ("info: unknown format", ["info", "--format=xml", "-d", dirs["good"]]),
        ("graph: bad regex", ["graph", "--include", "(x", "-d", dirs["good"]]),
        ("tui: not a terminal", ["tui", "-d", dirs["good"]]),
        ("tui: unknown thread", ["tui", "--thread", "999999999", "-d", dirs["good"]]),
        ("graph: no function of that name", ["graph", "-d", dirs["good"], "NOSUCHFUNC"]),
        ("export: unknown format", ["export", "--format=svg", "-o", "x", "-d", dirs["good"]]),
        ("export: -o in a missing directory",
         ["export", "--format=chrome", "-o", dirs["missing"] + "/x.json", "-d", dirs["good"]]),
        ("export: --fold-recursion with another format than folded",
         ["export", "--format=chrome", "--fold-recursion", "-o", "x", "-d", dirs["good"]]),
        ("coverage: --fail-under over 100", ["coverage", "--fail-under", "101", "-d",
                                             dirs["good"]]),
        ("coverage: unknown format", ["coverage", "--format=xml", "-d", dirs["good"]]),
        ("coverage: a missing --merge directory", ["coverage", "-d", dirs["good"], "--merge",
                                                   dirs["missing"]]),
        ("monitor: -o in a missing directory (the program is not run)",
         ["monitor", "-o", dirs["missing"] + "/x.txt", "--", "/bin/true"]),
        ("coverage: live, program not found", ["coverage", "--", "/no/such/program"]),
        ("coverage: live, -o in a missing directory (the program is not run)",
         ["coverage", "-o", dirs["missing"] + "/x.txt", "--", "/bin/true"]),
        ("coverage: -o in a missing directory",
         ["coverage", "-o", dirs["missing"] + "/x.txt", "-d", dirs["good"]]),
        ("html: -o in a missing directory",
         ["html", "-o", dirs["missing"] + "/x.html", "-d", dirs["good"]]),
        ("html: -o a directory", ["html", "-o", dirs["not_a_recording"], "-d", dirs["good"]]),
        ("html: --prune out of range", ["html", "--prune", "100", "-o", "x.html", "-d",
                                        dirs["good"]]),
        ("html: bad regex", ["html", "--exclude", "(x", "-o", "x.html", "-d", dirs["good"]]),
        ("diff: one directory only", ["diff", dirs["good"]]),
        ("-d without a value", ["report", "-d"]),
        ("record: no program", ["record", "-o", dirs["missing"] + ".rec"]),
        ("record: program not found", ["record", "-o", dirs["missing"] + ".rec", "--",
                                       "/no/such/program"]),
        ("record: program not executable", ["record", "-o", dirs["missing"] + ".rec", "--",
                                            dirs["a_file"]]),
        ("record: --chunk-size out of range", ["record", "--chunk-size=1", "--", "true"]),
        ("record: unknown clock", ["record", "--clock=sundial", "--", "true"]),
        ("record: --include an invalid regex",
         ["record", "-o", dirs["missing"] + ".rec", "--include=fib(", "--", "true"]),
        ("record: --exclude an invalid regex (the second of two)",
         ["record", "-o", dirs["missing"] + ".rec", "--exclude=main", "--exclude=[z-a]", "--",
          "true"]),
        ("record: -A without @", ["record", "-o", dirs["missing"] + ".rec", "-A", "fib", "--",
                                  "true"]),
        ("record: -A an unknown format", ["record", "-o", dirs["missing"] + ".rec", "-A",
                                          "fib@arg1/i33", "--", "true"]),
        ("record: -A argument 0", ["record", "-o", dirs["missing"] + ".rec", "-A", "fib@arg0",
                                   "--", "true"]),
        ("record: -A an invalid regex", ["record", "-o", dirs["missing"] + ".rec", "-A",
                                         "fib(@arg1", "--", "true"]),
        ("record: -R a format for this", ["record", "-o", dirs["missing"] + ".rec", "-R",
                                          "fib@retval/this", "--", "true"]),
        ("record: --patch an invalid regex", ["record", "-o", dirs["missing"] + ".rec",
                                              "--patch=fib(", "--", "true"]),
        ("record: --patch-module without --patch", ["record", "-o", dirs["missing"] + ".rec",
                                                    "--patch-module=libfoo", "--", "true"]),
        ("record: -o a regular file", ["record", "-o", dirs["a_file"], "--", "true"]),
        ("record: -o a non-empty directory that holds no recording",
         ["record", "-o", dirs["not_a_recording"], "--", "true"]),
        ("record: --duration without -p", ["record", "--duration", "1", "--", "true"]),
        ("record: -p and a program", ["record", "-o", dirs["missing"] + ".rec", "-p", "1", "--",
                                      "true"]),
        ("record: -p with --include", ["record", "-o", dirs["missing"] + ".rec", "-p", "1",
                                       "--include=main"]),
        ("record: -p of a process that does not exist",
         ["record", "-o", dirs["missing"] + ".rec", "-p", "999999999"]),
        ("record: -p of a process already traced (not permitted)",
         ["record", "-o", dirs["missing"] + ".rec", "-p", dirs["traced_pid"], "--duration", "1"]),
        ("record: a statically linked program (not run)",
         ["record", "-o", dirs["missing"] + ".rec", "--", dirs["static_fib"]]),
        ("trace: a statically linked program (not run)", ["trace", "--", dirs["static_fib"]]),
        ("monitor: no program", ["monitor"]),
        ("monitor: program not found", ["monitor", "--", "/no/such/program"]),
        ("monitor: not an ELF file", ["monitor", "--", dirs["not_elf"]]),
        ("monitor: --histogram without --lines", ["monitor", "--histogram", "--", "true"]),
        ("monitor: --duration without -p", ["monitor", "--duration", "1", "--", "true"]),
        ("monitor: -p and a program", ["monitor", "-p", "1", "--", "true"]),
        ("monitor: -p of a process that does not exist", ["monitor", "-p", "999999999"]),
        ("monitor: -p of a process already traced (not permitted)",
         ["monitor", "-p", dirs["traced_pid"], "--duration", "1"]),
        ("run: no --monitor", ["run", "--", "true"]),
        ("run: no program", ["run", "--monitor", dirs["factory_v1"]]),
        ("run: monitor not found", ["run", "--monitor", dirs["missing"] + ".so", "--", "true"]),
        ("run: monitor a directory", ["run", "--monitor", dirs["empty"], "--", "true"]),
        ("run: monitor not an ELF file", ["run", "--monitor", dirs["not_elf"], "--", "true"]),
        ("run: monitor without the factory (the program is not run)",
         ["run", "--monitor", dirs["no_factory"], "--", "true"]),
        ("run: monitor built for another API version",
         ["run", "--monitor", dirs["factory_v2"], "--", "true"]),
        ("run: --monitor-option not KEY=VALUE",
         ["run", "--monitor", dirs["factory_v1"], "--monitor-option", "verbose", "--", "true"]),
        ("run: program not found", ["run", "--monitor", dirs["factory_v1"], "--",
                                    "/no/such/program"]),
        ("run: unknown clock", ["run", "--monitor", dirs["factory_v1"], "--clock=sundial", "--",
                                "true"]),
        ("trace: no program", ["trace"]),
        ("trace: program not found", ["trace", "--", "/no/such/program"]),
        ("trace: bad regex", ["trace", "--include", "(x", "--", dirs["fib"]]),
        ("trace: -o and --output-dir", ["trace", "-o", "x", "--output-dir", "d", "--",
                                        dirs["fib"]]),
        ("trace: -o in a missing directory (the program is not run)",
         ["trace", "-o", dirs["missing"] + "/x.txt", "--", dirs["fib"]]),
        ("trace: --max-depth 0", ["trace", "--max-depth", "0", "--", dirs["fib"]]),
        ("inject: no --config", ["inject", "--", dirs["fib"]]),
        ("inject: missing config file", ["inject", "--config", dirs["missing"] + ".conf", "--",
                                         dirs["fib"]]),
        ("inject: bad config line (the program is not run)",
         ["inject", "--config", dirs["bad_conf"], "--", dirs["fib"]]),
        ("inject: config without rules", ["inject", "--config", dirs["empty_conf"], "--",
                                          dirs["fib"]]),
        ("inject: return value in a -finstrument-functions program",
         ["inject", "--config", dirs["return_conf"], "--", dirs["fib"]]),
        ("inject: program without callmon hooks",
         ["inject", "--config", dirs["good_conf"], "--", "true"]),
        ("inject: --log in a missing directory",
         ["inject", "--config", dirs["good_conf"], "--log",
          dirs["missing"] + "/x.log", "--", dirs["fib"]]),
        ("unknown command", ["frobnicate"]),
        ("no command", []),
    ]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--doc", help="write the table of cases and messages to this file")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    dirs = make_recordings(args.callmon, args.cc, args.work)
    rows, failed = [], 0
    for what, argv in cases(dirs):
        try:
            p = subprocess.run([args.callmon] + argv, cwd=args.work, capture_output=True,
                               text=True, errors="replace", timeout=20)
            status, err, out = p.returncode, p.stderr, p.stdout
        except subprocess.TimeoutExpired:
            status, err, out = None, "[hung: no answer in 20 s]", ""
        lines = err.splitlines()
        ok = status is not None and status > 0 and status < 128 and len(lines) == 1 \
            and lines[0].startswith("callmon")
        # The message names the unknown option, not a required one it lacks as well.
        if what.endswith(": unknown option") and "--no-such-option" not in err:
            ok = False
        # ...and a static program's, the reason (it used to run, then blame its build flags).
        if "statically linked" in what and ("statically linked" not in err or "fib(" in out):
            ok = False
        if not ok:
            failed += 1
            print(f"FAIL: {what}: callmon {' '.join(argv)}\n  status {status}\n  stderr: {err!r}")
        shown = err.strip().replace(args.work, "WORK").replace(PROGRAMS, "tests/programs")
        shown = shown.replace("process " + dirs["traced_pid"], "process PID")
        # The recording's pid in file names: the generated page stays the same from run to run.
        shown = re.sub(r"\b\d+\.0\.(\d+\.events|meta)\b",
                       lambda m: "PID.0." + ("PID.events" if m.group(1) != "meta" else "meta"),
                       shown)
        rows.append((what, status, shown, ok))
    for helper in HELPERS:
        helper.kill()
        helper.wait()
    print(f"{len(rows) - failed} of {len(rows)} cases answered with one line and a non-zero "
          "status")
    if args.doc:
        with open(args.doc, "w") as f:
            f.write("# Bad input: what each command answers\n\n"
                    "Generated by `tests/cli/bad_input.py --doc docs/bad-input.md` (the test "
                    "`cli.bad_input` runs the same table): every subcommand given a missing, "
                    "empty, corrupt, truncated or wrong-version recording, or wrong options, "
                    "answers with one line on stderr and a non-zero status. WORK is the test's "
                    "scratch directory; `good` a recording of tests/programs/fib.c, the other "
                    "directories damaged copies of it.\n\n"
                    "| case | status | stderr |\n|---|---|---|\n")
            for what, status, shown, ok in rows:
                cell = shown.replace("|", "\\|").replace("\n", "<br>")
                f.write(f"| {what} | {status} | `{cell}` |{'' if ok else ' **FAILS**'}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
