#!/usr/bin/env python3
"""Two (or more) callmon builds recording one program side by side: each round records it
once with each build in turn (a, b, a, b, ...: a change in the machine's load hits both
alike) and takes the CPU time of the whole recorded process tree (user + system, every
thread, from wait4) and the wall time; prints the medians over the rounds with their
ranges and the ratios to the first build, the load average before and after, and the
calls and the recorder's pauses (`paused_ns`) of the first round. For programs the bench
scripts do not build themselves, e.g. the SQLite shell of bench/real_programs.sh
(--sqlite-rows writes that script's workload to the program's stdin). Run by hand:

    python3 bench/record_ab.py --build base=OLD/bin/callmon --build new=build/bin/callmon \\
        --rounds 5 --sqlite-rows 250000 -- /work/realprog/bench-build/sqlite/sqlite3-fi :memory:
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

# bench/real_programs.sh's SQLite workload (keep the two alike).
SQL = """CREATE TABLE t(a INTEGER PRIMARY KEY, b INTEGER, c TEXT);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < {rows})
INSERT INTO t SELECT x, (x * 7919) % 100003, printf('row-%d-%x', x, x * 31) FROM n;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(b), max(length(c)) FROM t;
SELECT b % 100 AS k, count(*), avg(a) FROM t GROUP BY k ORDER BY k LIMIT 3;
SELECT count(*) FROM t AS x JOIN t AS y ON x.b = y.a WHERE x.a < {rows} / 2;
UPDATE t SET c = upper(c) WHERE a % 3 = 0;
DELETE FROM t WHERE a % 5 = 0;
SELECT count(*) FROM t WHERE c LIKE '%ROW-1%';
SELECT c FROM t ORDER BY c DESC LIMIT 2;
"""


def record(callmon, data, argv, stdin):
    """(CPU seconds, wall seconds) of one `callmon record` of argv."""
    shutil.rmtree(data, ignore_errors=True)
    t0 = time.perf_counter()
    with open(stdin) as f:
        p = subprocess.Popen([callmon, "record", "-o", data, "--"] + argv, stdin=f,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{callmon} record exited with status {status}")
    return ru.ru_utime + ru.ru_stime, wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", action="append", required=True, metavar="NAME=CALLMON")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--stdin", default="/dev/null")
    ap.add_argument("--sqlite-rows", type=int, help="bench/real_programs.sh's SQL on stdin")
    ap.add_argument("argv", nargs="+")
    args = ap.parse_args()
    builds = [b.split("=", 1) for b in args.build]
    work = tempfile.mkdtemp(prefix="callmon-record-ab.")
    try:
        stdin = args.stdin
        if args.sqlite_rows:
            stdin = os.path.join(work, "workload.sql")
            with open(stdin, "w") as f:
                f.write(SQL.format(rows=args.sqlite_rows))
        cpu = {n: [] for n, _ in builds}
        wall = {n: [] for n, _ in builds}
        first = {}
        print("load average before:", open("/proc/loadavg").read().strip(), flush=True)
        for r in range(args.rounds):
            for name, callmon in builds:
                data = os.path.join(work, "rec")
                c, w = record(callmon, data, args.argv, stdin)
                cpu[name].append(c)
                wall[name].append(w)
                if r == 0:
                    out = subprocess.run([callmon, "info", "-d", data, "--format", "json",
                                          "--no-pager"], capture_output=True, text=True,
                                         check=True).stdout
                    j = json.loads(out)
                    paused = sum(t.get("paused_ns", 0) for p in j["processes"]
                                 for t in p["threads"])
                    first[name] = (j["calls"], paused)
                shutil.rmtree(data, ignore_errors=True)
            print(f"round {r + 1} done", flush=True)
        print("load average after:", open("/proc/loadavg").read().strip())
        base = builds[0][0]
        print(f"medians of {args.rounds} interleaved rounds (min-max), ratio to {base}")
        for name, _ in builds:
            c, w = statistics.median(cpu[name]), statistics.median(wall[name])
            cb, wb = statistics.median(cpu[base]), statistics.median(wall[base])
            calls, paused = first[name]
            print(f"{name:8s} CPU {c:.3f} s ({min(cpu[name]):.3f}-{max(cpu[name]):.3f}) "
                  f"x{c / cb:.3f}   wall {w:.3f} s ({min(wall[name]):.3f}-{max(wall[name]):.3f}) "
                  f"x{w / wb:.3f}   {calls} calls, paused {paused / 1e6:.0f} ms (round 1)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
