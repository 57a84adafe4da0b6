#!/usr/bin/env python3
"""Honest times under competing load (docs/runtime.md, "Honest times").

Builds tests/programs/honest_times.c (whose functions' true cost the program measures
itself and prints as "truth NAME CALLS NS cpu|wall"), keeps both cores busy with two
spinning processes, records the program RUNS times per hook mode and holds each function's
figure in `callmon report --format=json` against its truth:

  cpu_bound, sleeper   total within 10% of the truth (cpu_bound: of the stretch between
                       the thread's CPU time and the time the kernel says it held a CPU,
                       both measured by the program: its "hidden cpu_bound" line;
                       docs/runtime.md, "The e2e check under load")
  sleeper              offcpu_ns at least 80% of its total
  tree                 within 25%, or its range holds the truth and is at most 2x the truth
                       wide, in a majority of the runs of each mode (one run slowed by the
                       host more than the calibrations saw can miss: reported, not failed);
                       with --tree-within F, also within F of the truth (the e2e check
                       under --max-depth=3: 50%, where the kept-out calls' probes are most
                       of the tree's time)
  clock_bound          its range holds the truth (a clock-bound loop: docs/runtime.md)
  every function       nothing whose truth is 1 ms or more reads 0

Prints one table per mode: each function's truth and worst error over the runs.

  bench/run_honest_times.py --callmon build/bin/callmon            # ten runs, the table
  bench/run_honest_times.py --callmon ... --runs 3 --check         # the e2e test: exit 1 on
                                                                     # a failed criterion
  bench/run_honest_times.py --self-test                            # the criteria on recorded
                                                                     # figures
Exit status 77 when the kernel refuses the scheduler events (perf_event_paranoid): then the
times include scheduler time by design and the criteria do not apply.
"""
import argparse
import json
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "tests", "programs")
MODE_FLAGS = {"cyg": ["-finstrument-functions"], "fentry": ["-pg", "-mfentry"],
              "pg": ["-pg"], "patchable": ["-fpatchable-function-entry=5"]}


def build(cc, mode, opt, work):
    """The fixture built in `mode`; its uninstrumented copy of the work built plain."""
    exe = os.path.join(work, f"honest_times.{mode}")
    plain_obj = os.path.join(work, "honest_times_plain.o")
    common = [f"-{opt}", "-g", "-I", PROGRAMS]
    subprocess.run([cc, *common, "-c", os.path.join(PROGRAMS, "honest_times_plain.c"),
                    "-o", plain_obj], check=True)
    subprocess.run([cc, *common, *MODE_FLAGS[mode], os.path.join(PROGRAMS, "honest_times.c"),
                    plain_obj, "-o", exe], check=True)
    return exe


def spin():
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    x = 0
    while True:
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF


def truths(stdout):
    """{name: {calls, ns, kind, hidden}}: the program's "truth" lines, with its "hidden"
    line's (ahead, behind) ns for the functions that have one (None: unreadable)."""
    out, hidden = {}, {}
    for line in stdout.splitlines():
        parts = line.split()
        if len(parts) == 5 and parts[0] == "truth":
            out[parts[1]] = {"calls": int(parts[2]), "ns": int(parts[3]), "kind": parts[4]}
        elif len(parts) == 4 and parts[0] == "hidden":
            a, b = int(parts[2]), int(parts[3])
            hidden[parts[1]] = (a, b) if a >= 0 and b >= 0 else None
    for name, h in hidden.items():
        if name in out:
            out[name]["hidden"] = h
    return out


def steal_ms():
    """The hypervisor's time on this machine's CPUs (/proc/stat "steal", all CPUs), in ms."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) * 1000 / os.sysconf("SC_CLK_TCK") if len(fields) > 8 else 0


def record_once(callmon, exe, work, rounds, record_args, name="rec"):
    data = os.path.join(work, name)
    rec = subprocess.run([callmon, "record", "-o", data, *record_args, "--", exe,
                          str(rounds)], capture_output=True, text=True, timeout=300)
    if rec.returncode != 0:
        raise RuntimeError(f"record failed ({rec.returncode}): {rec.stderr.strip()}")
    if "scheduler time not recorded" in rec.stderr:
        return None, None, rec.stderr
    rep = subprocess.run([callmon, "report", "-d", data, "--format=json"], capture_output=True,
                         text=True, timeout=300)
    if rep.returncode != 0:
        raise RuntimeError(f"report failed ({rep.returncode}): {rep.stderr.strip()}")
    funcs = {f["name"]: f for f in json.loads(rep.stdout)["functions"]}
    return truths(rec.stdout), funcs, rec.stderr


def judge(name, truth, f, tree_within=None):
    """(relative error of the total, problems) of one function in one run; `tree_within`:
    how far the tree's point may be from the truth whatever its range (None: no bound)."""
    ns = truth["ns"]
    total = f["total_ns"]
    lo, hi = f.get("total_ns_range", [total, total])
    if truth["kind"] == "wall":
        # The program's wall clock also ran while other programs held the CPU: callmon
        # takes that out of the times and shows it apart (preempted_ns).
        total, lo, hi = (v + f.get("preempted_ns", 0) for v in (total, lo, hi))
    err = (total - ns) / ns
    problems = []
    if ns >= 1_000_000 and total == 0:
        problems.append(f"{name} took {ns} ns but reads 0")
    # cpu_bound's truth, the thread's CPU time, and the time the scheduler shows it held a
    # CPU (what callmon sees) differ by what the program measured as hidden: the
    # hypervisor's time (steal) puts the latter ahead, and the kernel's two accounts of the
    # thread can disagree the other way (docs/runtime.md, "Honest times", "The e2e check
    # under load"). The figure is held against the nearest point of that stretch.
    ahead, behind = truth.get("hidden") or (0, 0)
    near = min(max(total, ns - behind), ns + ahead)
    if name in ("cpu_bound", "sleeper") and abs(total - near) > 0.10 * ns:
        extra = f", hidden {ahead} ahead, {behind} behind" if ahead or behind else ""
        problems.append(f"{name}: {total} ns against a truth of {ns} ({err:+.1%}{extra})")
    if name == "sleeper" and f.get("offcpu_ns", 0) < 0.8 * total:
        problems.append(f"sleeper: off-CPU {f.get('offcpu_ns', 0)} ns of {total}")
    if name == "tree" and ((abs(err) > 0.25 and not (lo <= ns <= hi and hi - lo <= 2 * ns)) or
                           (tree_within is not None and abs(err) > tree_within)):
        problems.append(f"tree: {total} ns [{lo}, {hi}] against a truth of {ns} ({err:+.1%})")
    if name == "clock_bound" and not (lo <= ns * 1.02 and ns <= hi * 1.02):
        problems.append(f"clock_bound: [{lo}, {hi}] does not hold the truth {ns}")
    return err, problems


def self_test():
    """judge()'s verdicts on cpu_bound figures of the two runs that failed at stop 36
    (docs/runtime.md, "The e2e check under load"), with and without the hidden time such a
    run measures (its size inferred from the recordings: the fixture did not measure it
    then), and on runs without any: the hidden time excuses what it measures, no more."""
    cases = [
        # (what, truth ns, hidden, callmon's total, fails)
        ("steal: a call 10 ms on a CPU, ~5.5 ms of CPU time, not measured", 13547798, None,
         18051438, True),
        ("the same, the steal measured", 13547798, (4503640, 0), 18051438, False),
        ("the same steal and 30 ms of preemption charged", 13547798, (4503640, 0),
         48051438, True),
        ("too low by 12%, CPU time ahead of the on-CPU time, measured", 13565357, (0, 1640000),
         11930108, False),
        ("too low by 12%, not measured", 13565357, (0, 0), 11930108, True),
        ("too low by 12%, only steal measured", 13565357, (1640000, 0), 11930108, True),
        ("a run without hidden time, 0.3% low", 12070830, (0, 0), 12020134, False),
        ("a run without hidden time, 11% high", 12070830, (38, 5), 13400000, True),
    ]
    bad = 0
    # (what, truth ns, callmon's total, its range, --tree-within, fails)
    tree_cases = [
        ("tree under --max-depth=3, the clock read twice, -88%, range holding", 374000, 44880,
         [0, 441052], None, False),
        ("the same with --tree-within=0.5", 374000, 44880, [0, 441052], 0.5, True),
        ("tree under --max-depth=3 now, -27%, --tree-within=0.5", 374000, 273000,
         [0, 580000], 0.5, False),
    ]
    for what, ns, total, rng, within, fails in tree_cases:
        _, problems = judge("tree", {"calls": 3, "ns": ns, "kind": "cpu"},
                            {"total_ns": total, "total_ns_range": rng}, within)
        ok = bool(problems) == fails
        bad += not ok
        print(f"{'ok  ' if ok else 'BAD '} {what}: {'fails' if problems else 'passes'}")
    for what, ns, hidden, total, fails in cases:
        truth = {"calls": 3, "ns": ns, "kind": "cpu"}
        if hidden is not None:
            truth["hidden"] = hidden
        _, problems = judge("cpu_bound", truth, {"total_ns": total})
        ok = bool(problems) == fails
        bad += not ok
        print(f"{'ok  ' if ok else 'BAD '} {what}: {'fails' if problems else 'passes'}")
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--opt", default="O2")
    ap.add_argument("--modes", default="cyg,fentry")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3, help="calls of each function per run")
    ap.add_argument("--spinners", type=int, default=2, help="competing busy processes")
    ap.add_argument("--record-arg", action="append", default=[])
    ap.add_argument("--tree-within", type=float, default=None,
                    help="the tree's point must also be within this fraction of the truth")
    ap.add_argument("--check", action="store_true", help="exit 1 when a criterion fails")
    ap.add_argument("--work", default=None)
    ap.add_argument("-v", "--verbose", action="store_true", help="each run's figures")
    ap.add_argument("--keep", action="store_true",
                    help="keep every recording (WORK/rec.MODE.RUN.ATTEMPT), not only the last")
    args = ap.parse_args()

    work = args.work or tempfile.mkdtemp(prefix="callmon-honest-")
    os.makedirs(work, exist_ok=True)
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.spinners)]
    for p in spinners:
        p.start()
    failures = []
    try:
        for mode in args.modes.split(","):
            exe = build(args.cc, mode, args.opt, work)
            errors = {}
            tree_misses = []  # judged over the mode's runs (below)
            for run in range(args.runs):
                # Time the hypervisor takes a virtual CPU away (steal) is invisible to the
                # guest's scheduler: no context switch, so it stays in the calls open then,
                # while the program's thread CPU time leaves it out. A run during which the
                # host took the CPUs for long is recorded again (at most twice), and said.
                for attempt in range(3):
                    before = steal_ms()
                    name = f"rec.{mode}.{run + 1}.{attempt + 1}" if args.keep else "rec"
                    truth, funcs, err = record_once(args.callmon, exe, work, args.rounds,
                                                    args.record_arg, name)
                    stolen = steal_ms() - before
                    if stolen < 5 or attempt == 2:
                        break
                    print(f"{mode} run {run + 1}: the host took {stolen:.0f} ms of the CPUs "
                          f"(steal): recorded again")
                if args.verbose:
                    print(f"  {mode} run {run + 1}: steal {stolen:.0f} ms, load average "
                          f"{os.getloadavg()[0]:.1f}")
                if truth is None:
                    print(f"skipped: the kernel refused the scheduler events: {err.strip()}")
                    return 77
                for name, t in sorted(truth.items()):
                    if name not in funcs:
                        failures.append(f"{mode} run {run + 1}: {name} not in the report")
                        continue
                    e, problems = judge(name, t, funcs[name], args.tree_within)
                    errors.setdefault(name, []).append((e, t["ns"], funcs[name]))
                    if args.verbose:
                        f = funcs[name]
                        print(f"  {mode} run {run + 1} {name}: truth {t['ns']} total "
                              f"{f['total_ns']} {f.get('total_ns_range', '')} preempted "
                              f"{f.get('preempted_ns', 0)} offcpu {f.get('offcpu_ns', 0)}"
                              + (f" hidden {t['hidden']}" if "hidden" in t else ""))
                    for p in problems:
                        (tree_misses if p.startswith("tree:") else failures).append(
                            f"{mode} run {run + 1}: {p}")
            # The tree's calls are as short as the probes around them, so one run in which
            # the host slowed the probes more than the calibrations saw (no steal, no
            # preemption to show it) can put the tree past its range: that takes a majority
            # of the runs to fail the check; a single one is reported.
            if len(tree_misses) * 2 > args.runs:
                failures += tree_misses
            else:
                for m in tree_misses:
                    print(f"NOTE {m} (in {len(tree_misses)} of {args.runs} runs: a majority "
                          f"fails the check)")
            print(f"mode {mode}, {args.cc} -{args.opt}, {args.runs} runs, {args.spinners} "
                  f"spinners, {os.cpu_count()} cpus")
            print(f"  {'function':<12} {'truth/round':>12} {'median err':>11} {'worst err':>10}"
                  f" {'worst range/round':>24}")
            for name, rows in sorted(errors.items()):
                worst = max(rows, key=lambda r: abs(r[0]))
                f = worst[2]
                lo, hi = f.get("total_ns_range", [f["total_ns"], f["total_ns"]])
                calls = args.rounds
                print(f"  {name:<12} {worst[1] / calls / 1e3:>10.1f}us "
                      f"{statistics.median(r[0] for r in rows):>+10.1%} {worst[0]:>+10.1%} "
                      f"{f'[{lo / calls / 1e3:.1f}, {hi / calls / 1e3:.1f}]us':>24}")
    finally:
        for p in spinners:
            p.terminate()
    for f in failures:
        print("FAIL", f)
    return 1 if failures and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
