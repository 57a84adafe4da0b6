#!/usr/bin/env python3
"""End-to-end test of one fixture program (tests/programs) in one build.

Builds the fixture with the given compiler at the given optimisation level in the given hook
mode (--mode: cyg = -finstrument-functions, pg = -pg, fentry = -pg -mfentry, sled-fentry =
gcc -pg -mfentry -mnop-mcount -mrecord-mcount, patchable = -fpatchable-function-entry=5), runs it once
plainly and once under `callmon record`, and checks:
the program's stdout and exit status are the same both ways and equal the expected ones;
`callmon report --format=json` counts exactly the expected calls per function (and nothing
else); `callmon replay --demangle=full` prints exactly the expected call tree once durations, pids and tids
are normalised; `callmon info --format=json` tells the expected exit status, processes and
thread states; in the -pg modes also that recording left no gmon.out behind. The
expectations live in tests/e2e/fixtures/<fixture>.py (see expect.py); a fixture whose tree
legitimately depends on the mode reads expect.MODE (and expect.OPT, expect.COMPILER).

Exit status: 0 passed, 1 failed, 77 skipped (CTest's SKIP_RETURN_CODE). Python stdlib only.
"""
import argparse
import difflib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "fixtures"))  # a fixture may build on another one
import expect  # noqa: E402  (the builder the fixture files use)

PROGRAMS = os.path.join(os.path.dirname(HERE), "programs")
RUN_TIMEOUT = 120
SKIP = 77


class Failures:
    """Collects every failed check, so one run reports all that is wrong."""

    def __init__(self):
        self.items = []

    def add(self, what, detail):
        self.items.append((what, detail))
        print(f"FAIL: {what}\n{detail}\n", flush=True)

    def check_equal(self, what, expected, got):
        if expected != got:
            self.add(what, f"  expected: {expected!r}\n  got:      {got!r}")


def run(cmd, cwd, timeout=RUN_TIMEOUT, env=None):
    """Runs cmd; returns CompletedProcess (text). A timeout is turned into status None."""
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                              errors="replace", timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return subprocess.CompletedProcess(cmd, None, out, err + f"\n[timed out after {timeout}s]")


def program_test_args(doc, modes, add_args=None):
    """The arguments of the scripts that build one program of tests/programs in a hook
    mode and compare runs with and without callmon (run_async_cancel.py, run_sigjmp.py,
    run_asan_program.py, run_ucontext_fork.py): --callmon, --cc, --mode (one of `modes`,
    flags from MODE_FLAGS), --work (made if missing) and what add_args(parser) adds."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--mode", required=True, choices=modes)
    ap.add_argument("--work", required=True)
    if add_args:
        add_args(ap)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    return args


def build_program(a, source, extra=(), libs=()):
    """Compiles tests/programs/SOURCE with a.cc at -O2 -g in hook mode a.mode (MODE_FLAGS)
    into a.work, named after the source without its suffix; `extra` before the source,
    `libs` after it. Returns the program's path."""
    exe = os.path.join(a.work, os.path.splitext(source)[0])
    subprocess.run([a.cc, "-O2", "-g", *extra, *MODE_FLAGS[a.mode],
                    os.path.join(PROGRAMS, source), "-o", exe, *libs], check=True)
    return exe


def program_counts(stderr):
    """The `name calls` lines a program of tests/programs printed (its own call counts)."""
    counts = {}
    for line in stderr.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            counts[parts[0]] = int(parts[1])
    return counts


def recorded_counts(callmon, data):
    """(calls per function name, summed over processes and threads, as `callmon report
    --format=json` counts them in the recording `data`; "") or (None, what went wrong)."""
    rep = subprocess.run([callmon, "report", "-d", data, "--format=json"], capture_output=True,
                         text=True, timeout=120)
    if rep.returncode != 0:
        return None, f"report status {rep.returncode}: {rep.stderr.strip()}"
    counts = {}
    for f in json.loads(rep.stdout)["functions"]:
        counts[f["name"]] = counts.get(f["name"], 0) + f["calls"]
    return counts, ""


def check_counts(traced, made, problems, prefix="", allowance=0):
    """Appends to `problems` (each message after `prefix`) each function of `made` (name ->
    the calls the program counted itself, None if it did not say) whose calls in `traced`
    (name -> calls, as recorded_counts gives them) are not from that many to that many +
    `allowance` (calls recorded that the program did not count: an abandoned hook's)."""
    for name, want in made.items():
        got = traced.get(name, 0)
        if want is None or not 0 <= got - want <= allowance:
            problems.append(f"{prefix}{name}: {got} call(s) recorded, the program made {want}")


def check_recording(callmon, data, problems, prefix="", listed=True, unmatched_ok=None,
                    status_of=None, statuses=None):
    """Checks the recording `data` through `callmon info --format=json`, appending to
    `problems` what is wrong, each message after `prefix`:
      - info's failure: nothing more is checked, and the result is False (else True);
      - with `listed`, each problem info lists;
      - with `unmatched_ok` (a number), events lost and more than `unmatched_ok` unmatched
        exits, summed over every thread (for runs allowed a few unmatched exits, which
        info lists as a problem: pass listed=False then);
      - with `status_of(process, thread)`, each thread whose status is not what it returns;
      - with `statuses`, the sorted statuses of all threads if they differ from it."""
    info = subprocess.run([callmon, "info", "-d", data, "--format", "json"],
                          capture_output=True, text=True, timeout=60)
    if info.returncode != 0:
        problems.append(f"{prefix}info status {info.returncode}: {info.stderr.strip()}")
        return False
    doc = json.loads(info.stdout)
    if listed:
        problems.extend(f"{prefix}info: {p}" for p in doc.get("problems", []))
    threads = [(p, t) for p in doc["processes"] for t in p["threads"]]
    if unmatched_ok is not None:
        lost = sum(t.get("lost_events", 0) for _, t in threads)
        unmatched = sum(t.get("unmatched_exits", 0) for _, t in threads)
        if lost:
            problems.append(f"{prefix}{lost} event(s) lost")
        if unmatched > unmatched_ok:
            problems.append(f"{prefix}{unmatched} unmatched exit(s)")
    if status_of:
        for p, t in threads:
            want = status_of(p, t)
            if t.get("status") != want:
                problems.append(f"{prefix}process {p.get('pid')}: thread {t.get('tid')} "
                                f"status {t.get('status')}, expected {want}")
    if statuses is not None:
        got = sorted(t.get("status") for _, t in threads)
        if got != sorted(statuses):
            problems.append(f"{prefix}thread states {got}, expected {sorted(statuses)}")
    return True


def report_problems(problems):
    """Prints each problem and the verdict; the script's exit status (0 passed, 1 failed)."""
    for p in problems:
        print("FAIL " + p)
    print("ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


def site_test_start(doc, add_args=None):
    """The common start of the tests that build one of tests/programs' site programs
    themselves (sled_sites.py, xray_sites.py): parses --callmon, --runtime (libcallmon.so),
    --cc, --work and what add_args(parser) adds; returns (args, None), or (None, SKIP) when
    the compiler is missing. The work directory is made empty."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--runtime", required=True, help="libcallmon.so")
    ap.add_argument("--cc", required=True)
    ap.add_argument("--work", required=True)
    if add_args:
        add_args(ap)
    args = ap.parse_args()
    if not args.cc or args.cc.endswith("-NOTFOUND") or not shutil.which(args.cc):
        print(f"SKIP: compiler not found ({args.cc})")
        return None, SKIP
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    return args, None


def build_site_program(args, name, flags):
    """Builds tests/programs/NAME.c with args.cc and FLAGS into args.work; its path, or None
    after printing the failed build."""
    prog = os.path.join(args.work, name)
    built = run([args.cc, "-g", "-Wall", "-I", PROGRAMS] + flags +
                ["-o", prog, os.path.join(PROGRAMS, name + ".c")], args.work)
    if built.returncode != 0:
        print("FAIL: build\n" + describe(built))
        return None
    return prog


def child_pids(pid):
    """The pids whose parent is pid (from /proc)."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            # Fields after the command name, which is in parentheses and may hold spaces.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry))
    return kids


def run_and_kill(cmd, cwd, line, under_callmon):
    """Runs cmd, waits until it prints `line`, then sends SIGKILL to the program: cmd itself,
    or under callmon the program callmon started. Returns a CompletedProcess."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace")
    out = []
    deadline = time.monotonic() + RUN_TIMEOUT
    for text in proc.stdout:
        out.append(text)
        if text.rstrip("\n") == line or time.monotonic() > deadline:
            break
    targets = child_pids(proc.pid) if under_callmon else [proc.pid]
    for pid in targets:
        os.kill(pid, signal.SIGKILL)
    rest, err = proc.communicate(timeout=RUN_TIMEOUT)
    if not targets:
        err += "\n[run_fixture: found no program process to kill]"
    return subprocess.CompletedProcess(cmd, proc.returncode, "".join(out) + rest, err)


def describe(proc):
    return (f"  command: {' '.join(proc.args)}\n  status: {proc.returncode}\n"
            f"  stderr: {proc.stderr.strip()[-2000:]}")


def load_fixture(name):
    path = os.path.join(HERE, "fixtures", name + ".py")
    spec = importlib.util.spec_from_file_location("fixture_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MODE_FLAGS = {"cyg": ["-finstrument-functions"], "pg": ["-pg"], "fentry": ["-pg", "-mfentry"],
              # Nop sleds patched at start-up (docs/modes.md). gcc implements -mnop-mcount
              # for position-dependent code only.
              "sled-fentry": ["-pg", "-mfentry", "-mnop-mcount", "-mrecord-mcount",
                              "-fno-pie", "-no-pie"],
              "patchable": ["-fpatchable-function-entry=5"],
              # clang's XRay sleds, patched by callmon at start-up (docs/modes.md).
              "xray": ["-fxray-instrument", "-fxray-instruction-threshold=1"],
              # No flag at all: `record --patch=.` patches the entries in memory
              # (docs/patching.md); the fixture's libraries and plugins too.
              "patch": []}

# What `callmon record` needs per mode beyond the fixture's own options.
MODE_RECORD_ARGS = {"patch": ["--patch=.", "--patch-module=\\.so$"]}


def build(fx, args, work):
    """Compiles the fixture (and its plugin, if any) into work/. Returns the program path."""
    mode = getattr(args, "mode", "cyg")
    # CFLAGS: the fixture's own options (prologue shapes, frame pointers; own_alloc's
    # -fno-builtin, so that the compilers do not treat its malloc and free as the C library's;
    # early_start's -Wl,-z,now).
    extra = list(getattr(fx, "CFLAGS", []))
    common = [f"-{args.opt}", "-g"] + MODE_FLAGS[mode] + extra + ["-Wall", "-I", PROGRAMS]
    # gcc has no -mnop-mcount for -fPIC code: a sled-fentry program's plugins are built
    # with -fpatchable-function-entry=5 (both lists are patched the same way).
    plugin_mode = "patchable" if mode == "sled-fentry" else mode
    plugin_common = ([f"-{args.opt}", "-g"] + MODE_FLAGS[plugin_mode] + extra +
                     ["-Wall", "-I", PROGRAMS])
    for lib, sources in getattr(fx, "PLUGINS", []):
        cmd = [args.cc] + plugin_common + ["-fPIC", "-shared", "-o", os.path.join(work, lib)]
        cmd += [os.path.join(PROGRAMS, s) for s in sources]
        proc = run(cmd, work)
        if proc.returncode != 0:
            raise RuntimeError("building the plugin failed\n" + describe(proc))
    # Shared libraries the program links against (found next to it through its rpath).
    linked = []
    for lib, sources in getattr(fx, "SHARED_LIBS", []):
        cmd = [args.cc] + common + ["-fPIC", "-shared", "-Wl,-soname," + lib,
                                    "-o", os.path.join(work, lib)]
        cmd += [os.path.join(PROGRAMS, s) for s in sources]
        proc = run(cmd, work)
        if proc.returncode != 0:
            raise RuntimeError("building the shared library failed\n" + describe(proc))
        linked += [os.path.join(work, lib)]
    if linked:
        linked += ["-Wl,-rpath,$ORIGIN"]
    cxx = any(s.endswith(".cpp") for s in fx.SOURCES)
    compiler = args.cxx if cxx else args.cc
    program = os.path.join(work, fx.PROGRAM)
    cmd = [compiler] + common + ["-pthread", "-o", program]
    cmd += [os.path.join(PROGRAMS, s) for s in fx.SOURCES]
    cmd += linked + ["-ldl"]
    if cxx and args.compiler == "clang":
        cmd += ["-lstdc++"]
    proc = run(cmd, work)
    if proc.returncode != 0:
        raise RuntimeError("building the fixture failed\n" + describe(proc))
    return program


def patch_excludes(fx):
    """In patch mode, what the -finstrument-functions build leaves uninstrumented is left
    unpatched too, so the counts compare like for like: the fixture's NOT_INSTRUMENTED
    functions (found in its sources) and atexit, which libc_nonshared.a links into the
    program. `record --exclude` keeps them from being patched at all."""
    names = set()
    sources = list(fx.SOURCES)
    for _, srcs in getattr(fx, "PLUGINS", []) + getattr(fx, "SHARED_LIBS", []):
        sources += srcs
    for src in sources:
        with open(os.path.join(PROGRAMS, src)) as f:
            text = f.read()
        for m in re.finditer(r"NOT_INSTRUMENTED\s+[^;{(]*?\b(\w+)\s*\(", text):
            names.add(m.group(1))
        if re.search(r"\batexit\s*\(", text):
            names.add("atexit")
    # (No filter when there is nothing to leave out: a filter changes how the runtime
    # writes its calibration.)
    return ["--exclude=^(" + "|".join(sorted(names)) + ")$"] if names else []


def callmon_status(plain_status):
    """The status callmon must exit with: the program's, 128+signal if it was killed."""
    return 128 - plain_status if plain_status < 0 else plain_status


def pid_symbols(info, replay_text):
    """Maps each pid of the recording to P1, P2, ... in the order info lists processes
    (start order), falling back to the order of the replay's process lines."""
    pids = []
    if info:
        for p in info.get("processes", []):
            pids.append(int(p.get("pid", -1)))
    if not pids and replay_text:
        pids = [int(m.group(1)) for m in
                re.finditer(r"^# process \S+ pid (\d+)", replay_text, re.M)]
    table = {}
    for pid in pids:
        if pid not in table:
            table[pid] = f"P{len(table) + 1}"
    return table


def sym_key(key, pids):
    """'4242.1' -> 'P1.1'."""
    m = re.fullmatch(r"(\d+)\.(\d+)", str(key))
    if not m:
        return str(key)
    return f"{pids.get(int(m.group(1)), '?' + m.group(1))}.{m.group(2)}"


def normalize_replay(text, pids):
    """Turns replay output into comparable lines: the duration field and its ' | ' go, pids
    become P1.., tids become MAIN (tid == pid) or T, executables their base name."""
    out = []
    current_pid = None

    def map_pids(s):
        return re.sub(r"\b\d+\b", lambda m: pids.get(int(m.group(0)), m.group(0)), s)

    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        m = re.match(r"^# process (\S+) pid (\d+) ppid (\d+) exe (.*)$", line)
        if m:
            current_pid = int(m.group(2))
            ppid = pids.get(int(m.group(3)), "EXT")
            out.append(f"# process {sym_key(m.group(1), pids)} pid {pids.get(current_pid, '?')}"
                       f" ppid {ppid} exe {os.path.basename(m.group(4))}")
            continue
        m = re.match(r'^# thread (\d+)( .*)?$', line)
        if m:
            out.append("# thread MAIN" if int(m.group(1)) == current_pid else "# thread T")
            continue
        if re.match(r"^#\s+DURATION\b", line):
            continue  # the column header
        if line.startswith("# "):
            out.append(map_pids(line))
            continue
        if " | " in line:
            body = line.split(" | ", 1)[1]
            if body.lstrip().startswith("# "):
                body = map_pids(body.lstrip())
            out.append(body)
            continue
        out.append("?? " + line)  # neither a special nor a call line: shows up in the diff
    return out


def show_diff(expected, got, limit=80):
    diff = list(difflib.unified_diff(expected, got, "expected", "callmon replay", lineterm="", n=2))
    text = "\n".join(diff[:limit])
    if len(diff) > limit:
        text += f"\n... {len(diff) - limit} more diff lines"
    return text


def function_table(functions):
    """report's functions by display name (for the fixtures' own checks)."""
    return {expect.display_name(f.get("name", "?")): f for f in functions}


def counts_match(expected, got):
    """Same functions; each count equal to an int or accepted by a predicate."""
    if set(expected) != set(got):
        return False
    return all(want(got[name]) if callable(want) else want == got[name]
               for name, want in expected.items())


def function_counts(functions, what, failures):
    counts = {}
    for f in functions:
        name = expect.display_name(f.get("name", "?"))
        if name in counts:
            failures.add(what, f"  function {name!r} listed twice")
        counts[name] = counts.get(name, 0) + int(f.get("calls", -1))
        total, self_ns = f.get("total_ns"), f.get("self_ns")
        if not (isinstance(total, (int, float)) and isinstance(self_ns, (int, float))
                and 0 <= self_ns <= total):
            failures.add(what, f"  {name}: expected 0 <= self_ns <= total_ns, got "
                               f"self_ns={self_ns!r} total_ns={total!r}")
    return counts


def check_info(fx, info, pids, program, failures):
    spec = fx.INFO
    for field in ("exit_status", "exit_signal", "calls"):
        if field in spec:
            failures.check_equal(f"info {field}", spec[field], info.get(field))
    if "problems" in spec:
        failures.check_equal("info problems", spec["problems"], info.get("problems"))
    got_procs = info.get("processes", [])
    if len(got_procs) != len(spec["processes"]):
        failures.add("info processes", f"  expected {len(spec['processes'])} processes, got "
                                       f"{json.dumps(got_procs)[:2000]}")
        return
    for exp, got in zip(spec["processes"], got_procs):
        key = sym_key(got.get("key"), pids)
        where = f"info process {exp['key']}"
        failures.check_equal(where + " key", exp["key"], key)
        failures.check_equal(where + " parent", exp.get("parent"),
                             sym_key(got["parent"], pids) if got.get("parent") else None)
        failures.check_equal(where + " exe", program, os.path.basename(got.get("exe", "")))
        ppid_sym = pids.get(int(got.get("ppid", -1)), "EXT")
        failures.check_equal(where + " ppid", exp.get("ppid", "EXT"), ppid_sym)
        threads = sorted((t.get("status"), t.get("calls")) for t in got.get("threads", []))
        if any(calls is None for _, calls in exp["threads"]):  # None: the count varies
            threads = [(status, None) for status, _ in threads]
        failures.check_equal(where + " threads (status, calls)", sorted(exp["threads"]), threads)
        if "thread_names" in exp:
            names = sorted(t.get("name") for t in got.get("threads", []))
            failures.check_equal(where + " thread names", sorted(exp["thread_names"]), names)


def check_pauses(info, failures):
    """The runtime grows a thread's file in windows of 16 KiB-1 MiB and records each growth
    as a PAUSE: a thread with more than 64 KiB of records has had some, and they cannot
    outlast the thread. Host bursts are some of the PAUSEs, caught only by fenced probes."""
    fenced = (info.get("clock") or {}).get("kind") == "tsc-fenced"
    for p in info.get("processes", []):
        for t in p.get("threads", []):
            paused, duration = t.get("paused_ns", 0), t.get("duration_ns", 0)
            bursts, burst_ns = t.get("host_bursts"), t.get("host_burst_ns")
            if bursts is None or burst_ns is None or burst_ns > paused or \
                    (bursts == 0) != (burst_ns == 0) or (bursts and not fenced):
                failures.add("info: host bursts", f"  thread {t.get('tid')}: {bursts} burst(s), "
                             f"{burst_ns} ns, of {paused} ns paused (clock fenced: {fenced})")
            if t.get("event_bytes", 0) > 64 << 10 and paused <= 0:
                failures.add("info: paused_ns", f"  thread {t.get('tid')} wrote "
                             f"{t.get('event_bytes')} bytes of records and no PAUSE")
            if paused > duration:
                failures.add("info: paused_ns", f"  thread {t.get('tid')} paused {paused} ns "
                             f"of its {duration} ns")


def check_probe_cost(info, failures):
    """Every process calibrated at least once, and info shows what compensation takes."""
    for p in info.get("processes", []):
        cost = p.get("probe_cost")
        if not cost or cost.get("calibrations", 0) < 1 or \
                not 0 <= cost.get("inner_ns", -1) <= cost.get("outer_ns", -1):
            failures.add("info: probe cost", f"  process {p.get('key')}: {cost}")


def meta_calibrations(meta_path):
    """[(inner, outer, exposed or None)] of a meta file's `overhead` lines in order, each
    with the `overhead-exposed` line after it (a pair of floats); raises ValueError on an
    exposed line without its overhead line."""
    out = []
    for line in open(meta_path):
        f = line.split()
        if f[:1] == ["overhead"]:
            out.append((float(f[1]), float(f[2]), None))
        elif f[:1] == ["overhead-exposed"]:
            if not out or out[-1][2] is not None:
                raise ValueError(f"{meta_path}: overhead-exposed without its overhead line")
            out[-1] = out[-1][:2] + ((float(f[1]), float(f[2])),)
    return out


def calibration_problems(cals, fenced):
    """What is wrong with a meta file's calibrations (meta_calibrations): each needs
    0 < inner <= outer and, with the fenced clock only, an exposed pair within it."""
    problems = []
    for inner, outer, exposed in cals:
        if not 0 < inner <= outer or fenced != (exposed is not None) or (exposed and (
                exposed[0] > inner + 0.01 or exposed[1] > outer - inner + 0.01)):
            problems.append(f"overhead {inner} {outer}, exposed {exposed} (clock fenced: "
                            f"{fenced})")
    return problems


def check_exposed_bursts(data, dump_text, fenced, failures):
    """What compensation needs for the host bursts no check catches (fenced clock only):
    every meta file's calibrations each with its `overhead-exposed` line, within the
    `overhead` it is part of, and each thread file's entry-stretch counters in `callmon
    dump`'s `file` lines (checked ticks, and burst ticks no more than the thread's); without
    the fenced clock none of them."""
    for name in sorted(os.listdir(data)):
        if not name.endswith(".meta"):
            continue
        try:
            cals = meta_calibrations(os.path.join(data, name))
            problems = calibration_problems(cals, fenced) if cals else ["no overhead line"]
        except ValueError as e:
            problems = [str(e)]
        for p in problems:
            failures.add("meta: overhead", f"  {name}: {p}")
    checked_somewhere = False
    for line in dump_text.splitlines():
        if not line.startswith("file "):
            continue
        h = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        checked, caught = int(h["entry_checked_ticks"]), int(h["entry_burst_ticks"])
        checked_somewhere |= checked > 0
        if caught > int(h["burst_ticks"]) or (not fenced and (checked or caught)):
            failures.add("dump: entry stretch counters", f"  {line}")
    if fenced and not checked_somewhere:
        failures.add("dump: entry stretch counters", "  no thread's entry hooks checked a tick")


def dump_records(text):
    """[(kind, {field: value})] of `callmon dump`'s record lines (enter, exit, pause, ...),
    every thread file's in turn; the `file` lines are left out."""
    records = []
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        if kind != "file" and "ticks=" in rest:
            records.append((kind, dict(kv.split("=", 1) for kv in rest.split())))
    return records


def json_of(proc, what, failures):
    if proc.returncode != 0:
        failures.add(what, describe(proc))
        return None
    try:
        return json.loads(proc.stdout)
    except ValueError as e:
        failures.add(what, f"  not JSON ({e}): {proc.stdout[:500]!r}")
        return None


def replay_prefix(callmon, data, cwd, nlines):
    """Reads only the first nlines of `callmon replay` (for traces whose full tree is too big
    to print), then stops it. The column header line does not count."""
    proc = subprocess.Popen([callmon, "replay", "--demangle=full", "-d", data], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, errors="replace")
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if len(lines) >= nlines + 1:
                break
    finally:
        proc.kill()
        proc.wait()
    return "".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--compiler", required=True, choices=["gcc", "clang"])
    ap.add_argument("--cc", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--opt", required=True, choices=["O0", "O2"])
    ap.add_argument("--mode", default="cyg", choices=sorted(MODE_FLAGS),
                    help="hook mode: cyg (-finstrument-functions), pg (-pg), fentry (-pg -mfentry), "
                         "sled-fentry (gcc -pg -mfentry -mnop-mcount -mrecord-mcount), "
                         "patchable (-fpatchable-function-entry=5), "
                         "xray (clang -fxray-instrument), "
                         "patch (no flag, recorded with --patch=.)")
    ap.add_argument("--work", required=True)
    ap.add_argument("--record-arg", action="append", default=[],
                    help="extra option for callmon record (repeatable), e.g. --clock=monotonic")
    args = ap.parse_args()

    for tool in (args.cc, args.cxx):
        if not tool or tool.endswith("-NOTFOUND") or not shutil.which(tool):
            print(f"SKIP: compiler {args.compiler} not found ({tool}); install it to run "
                  f"the {args.compiler} variants")
            return SKIP
    expect.MODE, expect.OPT, expect.COMPILER = args.mode, args.opt, args.compiler
    fx = load_fixture(args.fixture)
    # A fixture that needs something this machine lacks (a processor feature) says so.
    reason = getattr(fx, "skip_reason", lambda: None)()
    if reason:
        print(f"SKIP: {reason}")
        return SKIP
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    print(f"fixture {args.fixture}, {args.compiler} -{args.opt} {args.mode}, in {args.work}",
          flush=True)
    failures = Failures()
    try:
        program = build(fx, args, args.work)
    except RuntimeError as e:
        print(f"FAIL: {e}")
        return 1
    argv = ["./" + fx.PROGRAM] + list(getattr(fx, "ARGS", []))

    kill_line = getattr(fx, "KILL_AFTER_LINE", None)
    plain = run_and_kill(argv, args.work, kill_line, False) if kill_line else run(argv, args.work)
    failures.check_equal("plain run: stdout", fx.STDOUT, plain.stdout)
    failures.check_equal("plain run: exit status", fx.STATUS, plain.returncode)

    # A -pg program writes gmon.out at exit; under callmon it must not (docs/runtime.md).
    gmon = os.path.join(args.work, "gmon.out")
    if os.path.exists(gmon):
        os.unlink(gmon)

    data = os.path.join(args.work, "callmon.data")
    # A fixture with DEFAULT_DIR records without -o: callmon must use ./callmon.data.
    out_opt = [] if getattr(fx, "DEFAULT_DIR", False) else ["-o", data]
    # Library calls (docs/patching.md) only where the fixture expects them (LIBCALL = True):
    # the other fixtures' expectations are the program's own functions.
    libcall = [] if getattr(fx, "LIBCALL", False) else ["--no-libcall"]
    # A --patch-module of the test's own replaces the mode's.
    mode_args = [a for a in MODE_RECORD_ARGS.get(args.mode, [])
                 if not (a.startswith("--patch-module=") and
                         any(r.startswith("--patch-module=") for r in args.record_arg))]
    record_args = (libcall + args.record_arg + mode_args +
                   (patch_excludes(fx) if args.mode == "patch" else []) +
                   list(getattr(fx, "RECORD_ARGS", [])))
    rec_cmd = [args.callmon, "record"] + out_opt + record_args + ["--"] + argv
    rec_start = time.monotonic()
    rec = run_and_kill(rec_cmd, args.work, kill_line, True) if kill_line else run(rec_cmd, args.work)
    rec_seconds = time.monotonic() - rec_start
    failures.check_equal("record: program's stdout (as without callmon)", plain.stdout, rec.stdout)
    if rec.returncode != callmon_status(fx.STATUS):
        failures.add("record: exit status", f"  expected {callmon_status(fx.STATUS)}\n" + describe(rec))
    if os.path.exists(gmon):
        failures.add("record: gmon.out", "  the recorded run wrote gmon.out (gprof's output)")
    if not os.path.isdir(data):
        failures.add("record", f"  no recording directory {data}\n" + describe(rec))
        return finish(failures)

    info = json_of(run([args.callmon, "info", "--format=json", "-d", data], args.work),
                   "info --format=json", failures)
    # A clock asked for by name is the one the recording says it used.
    clock = [a.split("=", 1)[1] for a in record_args if a.startswith("--clock=")]
    if info is not None and clock and clock[-1] != "auto":
        failures.check_equal("info: clock kind", clock[-1], info.get("clock", {}).get("kind"))
    # The records themselves and the thread files' headers (one dump for all the checks).
    dump = run([args.callmon, "dump", "-d", data], args.work)
    if dump.returncode != 0:
        failures.add("dump", describe(dump))
    if info is not None:
        check_pauses(info, failures)
        check_probe_cost(info, failures)
        if dump.returncode == 0:
            check_exposed_bursts(data, dump.stdout,
                                 info.get("clock", {}).get("kind") == "tsc-fenced", failures)
    tree_lines = getattr(fx, "TREE_PREFIX_LINES", None)
    if tree_lines:
        replay_text = replay_prefix(args.callmon, data, args.work, tree_lines)
    else:
        rp = run([args.callmon, "replay", "--demangle=full", "-d", data], args.work)
        replay_text = rp.stdout if rp.returncode == 0 else ""
        if rp.returncode != 0:
            failures.add("replay", describe(rp))
    pids = pid_symbols(info, replay_text)

    report = json_of(run([args.callmon, "report", "--format=json", "-d", data], args.work),
                     "report --format=json", failures)
    if report is not None:
        counts = function_counts(report.get("functions", []), "report", failures)
        if info is not None and info.get("calls") != sum(counts.values()):
            failures.add("info calls vs report", f"  info counts {info.get('calls')} calls, "
                                                 f"report {sum(counts.values())}")
        # No call can last longer than the whole recorded run (a time in the wrong unit
        # or a wrong base shows up here).
        for f in report.get("functions", []):
            total = f.get("total_ns")
            if isinstance(total, (int, float)) and total > rec_seconds * 1e9:
                failures.add("report: total_ns", f"  {f.get('name')}: {total} ns, longer than "
                                                 f"the recorded run ({rec_seconds:.3f} s)")
        if not counts_match(fx.COUNTS, counts):
            failures.add("report: calls per function",
                         "  expected: " + json.dumps(fx.COUNTS, sort_keys=True,
                                                     default=lambda f: "(a predicate)") +
                         "\n  got:      " + json.dumps(counts, sort_keys=True))
        if hasattr(fx, "check_report"):
            for problem in fx.check_report(function_table(report.get("functions", []))):
                failures.add("report: " + problem.split(":")[0], "  " + problem)
        if hasattr(fx, "check_compensation"):  # compensated times against raw ones
            raw = json_of(run([args.callmon, "report", "--format=json", "--no-compensation",
                               "-d", data], args.work), "report --no-compensation", failures)
            if raw is not None:
                for problem in fx.check_compensation(
                        function_table(report.get("functions", [])),
                        function_table(raw.get("functions", []))):
                    failures.add("report: compensation", "  " + problem)

    if getattr(fx, "PER_PROCESS", None):
        per = json_of(run([args.callmon, "report", "--format=json", "--per-process", "-d", data],
                          args.work), "report --per-process", failures)
        if per is not None:
            got = {}
            for group in per.get("groups", []):
                key = sym_key(group.get("process"), pids)
                got[key] = function_counts(group.get("functions", []), f"group {key}", failures)
            if got != fx.PER_PROCESS:
                failures.add("report --per-process: calls per function and process",
                             "  expected: " + json.dumps(fx.PER_PROCESS, sort_keys=True) +
                             "\n  got:      " + json.dumps(got, sort_keys=True))

    if hasattr(fx, "check_tree"):  # a tree whose exact shape depends on timing
        for problem in fx.check_tree(normalize_replay(replay_text, pids)):
            failures.add("replay: " + problem.split(":")[0], "  " + problem)
    elif replay_text or not failures.items:
        expected_tree = fx.tree(expect.Replay(fx.PROGRAM))
        got_tree = normalize_replay(replay_text, pids)
        if tree_lines:
            expected_tree = expected_tree[:tree_lines]
            got_tree = got_tree[:len(expected_tree)]
        if expected_tree != got_tree:
            failures.add("replay: call tree (normalised)", show_diff(expected_tree, got_tree))

    if info is not None:
        check_info(fx, info, pids, fx.PROGRAM, failures)
        check_patch_refused(fx, info, failures)
        if args.mode == "patch":
            check_patch_every_process(info, failures)
    if hasattr(fx, "check_records") and dump.returncode == 0:  # in file order, and the mode
        for problem in fx.check_records(dump_records(dump.stdout), args.mode):
            failures.add("dump: " + problem.split(":")[0], "  " + problem)
    if hasattr(fx, "COVERAGE"):
        check_coverage(fx, args, argv, data, failures)
    if hasattr(fx, "ANALYSIS_FILTER"):
        check_analysis_filter(fx, args, argv, normalize_replay(replay_text, pids),
                              counts if report is not None else None, failures)
    if getattr(fx, "LIVE_TRACE", False):
        check_live_trace(fx, args, argv, failures)
    return finish(failures)


def check_live_trace(fx, args, argv, failures):
    """A live monitor (`callmon trace`) sees exactly the calls the recording counts: its
    lines `[PID] <indent>NAME` per call, counted by name, equal COUNTS; the program's output
    and status are its own."""
    tr = run([args.callmon, "trace", "--"] + argv, args.work)
    failures.check_equal("trace: exit status", fx.STATUS, tr.returncode)
    lines = (tr.stdout + "\n" + tr.stderr).splitlines()
    calls = {}
    program_out = []
    for line in lines:
        m = re.match(r"^\[\d+\] +(\S.*?)\s*$", line)
        if m:
            calls[m.group(1)] = calls.get(m.group(1), 0) + 1
        elif line and not line.startswith("callmon"):
            program_out.append(line)
    failures.check_equal("trace: calls per function", fx.COUNTS, calls)
    failures.check_equal("trace: program output", sorted(fx.STDOUT.splitlines()),
                         sorted(program_out))


def check_patch_refused(fx, info, failures):
    """fx.PATCH_REFUSED ({function: part of the reason}): `info --format=json` lists each as
    refused by entry patching, with that reason."""
    want = getattr(fx, "PATCH_REFUSED", None)
    if not want:
        return
    got = {}
    for p in info.get("processes", []):
        for m in p.get("patching", []):
            for r in m.get("refused_functions", []):
                got[r.get("name")] = r.get("reason", "")
    for name, reason in want.items():
        if name not in got:
            failures.add("info: patching refused", f"  {name} is not listed as refused; "
                                                   f"refused: {sorted(got)}")
        elif reason not in got[name]:
            failures.add("info: patching refused", f"  {name}: reason {got[name]!r}, "
                                                   f"expected it to say {reason!r}")


def check_patch_every_process(info, failures):
    """--patch: every process lists what entry patching did, a fork child too (its meta
    file repeats its parent's patch-* lines: its code is patched alike)."""
    for p in info.get("processes", []):
        if not p.get("patching"):
            failures.add("info: patching in every process",
                         f"  process {p.get('key', p.get('pid'))} lists no patched module")


def check_coverage(fx, args, argv, data, failures):
    """`callmon coverage` of the recording: the calls of every function of the modules named
    in fx.COVERAGE ({module basename: {function: calls}}), called or not; with
    fx.LIVE_COVERAGE also live coverage (`callmon coverage -- PROG`). Not in the nop-sled
    modes: coverage does not find their functions yet (docs/reliability.md). With --patch
    (the `patch` mode) the patched functions are listed: the fixture's among them, with
    their calls (the module's start-up code, patched too, may be listed besides). Nor in the
    XRay mode, whose sleds coverage does not read either."""
    if args.mode in ("sled-fentry", "patchable", "xray"):
        return
    check_coverage_json(fx, "coverage", run([args.callmon, "coverage", "--format=json", "-d",
                                              data], args.work), failures,
                        subset=args.mode == "patch")
    if args.mode == "patch":
        return  # live coverage does not patch
    if getattr(fx, "LIVE_COVERAGE", False):  # the program's output goes to stdout: -o
        out = os.path.join(args.work, "live_coverage.json")
        live = run([args.callmon, "coverage", "--format=json", "-o", out, "--"] + argv,
                   args.work)
        if live.returncode == 0:
            with open(out) as f:
                live.stdout = f.read()
        check_coverage_json(fx, "live coverage", live, failures)


def check_coverage_json(fx, what, proc, failures, subset=False):
    cov = json_of(proc, what + " --format=json", failures)
    if cov is None:
        return
    got = {}
    for module in cov.get("modules", []):
        base = os.path.basename(module.get("path", ""))
        if base in fx.COVERAGE:
            got[base] = {f["name"]: f["calls"] for f in module.get("functions", [])
                         if not subset or f["name"] in fx.COVERAGE[base]}
    failures.check_equal(what + ": calls per function", fx.COVERAGE, got)


def check_analysis_filter(fx, args, argv, filtered_tree, filtered_counts, failures):
    """A record-time filter against the analysis-time one: the program recorded again
    without the fixture's RECORD_ARGS, then `replay` and `report` given ANALYSIS_FILTER must
    show the same normalised tree and the same calls per function."""
    data = os.path.join(args.work, "unfiltered.data")
    libcall = [] if getattr(fx, "LIBCALL", False) else ["--no-libcall"]
    rec = run([args.callmon, "record", "-o", data] + libcall + args.record_arg + ["--"] + argv,
              args.work)
    if rec.returncode != callmon_status(fx.STATUS):
        failures.add("unfiltered record: exit status", describe(rec))
        return
    rp = run([args.callmon, "replay", "--demangle=full"] + fx.ANALYSIS_FILTER + ["-d", data], args.work)
    info = json_of(run([args.callmon, "info", "--format=json", "-d", data], args.work),
                   "unfiltered info --format=json", failures)
    if rp.returncode != 0 or info is None:
        failures.add("unfiltered replay " + " ".join(fx.ANALYSIS_FILTER), describe(rp))
        return
    got = normalize_replay(rp.stdout, pid_symbols(info, rp.stdout))
    if got != filtered_tree:
        failures.add("replay: record-time filter vs analysis filter " +
                     " ".join(fx.ANALYSIS_FILTER), show_diff(got, filtered_tree))
    report = json_of(run([args.callmon, "report", "--format=json"] + fx.ANALYSIS_FILTER +
                         ["-d", data], args.work), "unfiltered report", failures)
    if report is not None and filtered_counts is not None:
        counts = function_counts(report.get("functions", []), "unfiltered report", failures)
        failures.check_equal("report: record-time filter vs analysis filter calls",
                             counts, filtered_counts)


def finish(failures):
    if failures.items:
        print(f"{len(failures.items)} check(s) failed: " + "; ".join(w for w, _ in failures.items))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
