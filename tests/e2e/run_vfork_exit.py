#!/usr/bin/env python3
"""vfork children that leave by exit() instead of _exit() (tests/programs/vfork_exit.c),
directly and from three instrumented calls deep, from the main thread or from threads
started for it (which end before main goes on), main then ending by its own exit() call
(`thread`), by returning from main (`thread_return`; `thread_uexit`: the children leave
by _exit) or by pthread_exit as the last thread (`thread_pexit`): glibc's exit runs in the
child on the parent's memory, callmon's destructor among the rest. The program's output
and status must be as without callmon, the parent's calls recorded exactly and the
children's not at all, `callmon info` must show no problem and the program's threads
finished (main "unfinished" where it calls exit or pthread_exit itself: its own frame is
open), the thread file must end with its one END record, and the process's `exit` meta
line must be the parent's, once, after its last call.

Before the fix the first child's exit ran the runtime's end of process on the parent's
state: an END record and the `exit` line in the middle of the parent's recording, and the
parent's real end never written. On c8ad89b `thread_return` and `thread_pexit` lost the
end still: the threads that had vforked could not tie it to main's exit, so the meta file
had no `exit` line (and, main returning, main's thread file no END).

  run_vfork_exit.py --callmon build/bin/callmon --cc gcc \\
      --mode cyg|fentry|pg|patchable|patch|xray --work DIR
Exit status: 0 passed, 1 failed.
"""
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_fixture  # noqa: E402  (program_test_args, build_program, report_problems)

VARIANTS = ["direct", "deep", "thread", "thread_return", "thread_pexit", "thread_uexit"]


def check_end(a, data, variant, problems):
    """One END per thread file, as its last record; one `exit` meta line per process, at
    or after the last call's records."""
    dump = subprocess.run([a.callmon, "dump", "-d", data], capture_output=True, text=True,
                          timeout=120)
    if dump.returncode != 0:
        problems.append(f"{variant}: dump status {dump.returncode}: {dump.stderr.strip()}")
        return
    files = []  # per thread file: [ticks of END records, index of the last END, records, last call ticks]
    for line in dump.stdout.splitlines():
        if line.startswith("file "):
            files.append({"name": line.split()[1], "ends": 0, "after_end": 0, "last": 0})
            continue
        if not files or " ticks=" not in line:
            continue
        kind = line.split()[0]
        ticks = int(line.split("ticks=")[1].split()[0])
        f = files[-1]
        if kind == "end":
            f["ends"] += 1
            f["after_end"] = 0
        else:
            f["after_end"] += 1
        if kind in ("enter", "exit"):
            f["last"] = max(f["last"], ticks)
    last = 0
    for f in files:
        if f["ends"] != 1 or f["after_end"]:
            problems.append(f"{variant}: {f['name']}: {f['ends']} END record(s), "
                            f"{f['after_end']} record(s) after the last one")
        last = max(last, f["last"])
    exits = []
    for meta in glob.glob(os.path.join(data, "*.meta")):
        with open(meta) as m:
            exits += [int(l.split()[1]) for l in m if l.startswith("exit ")]
    if len(exits) != 1 or exits[0] < last:
        problems.append(f"{variant}: `exit` meta line(s) at {exits}, the last call's records "
                        f"at {last}")


def check_run(a, exe, variant, problems):
    plain = subprocess.run([exe, variant], capture_output=True, text=True, timeout=120,
                           cwd=a.work)
    if plain.returncode != 0 or plain.stdout != "ok\n":
        problems.append(f"{variant}: plain run: status {plain.returncode}, output "
                        f"{plain.stdout!r}")
        return
    data = os.path.join(a.work, f"{variant}.data")
    record = [a.callmon, "record"] + (["--patch=."] if a.mode == "patch" else [])
    rec = subprocess.run(record + ["-o", data, "--", exe, variant], capture_output=True,
                         text=True, timeout=180, cwd=a.work)
    if (rec.returncode, rec.stdout) != (plain.returncode, plain.stdout):
        problems.append(f"{variant}: under callmon status {rec.returncode}, output "
                        f"{rec.stdout!r} (without: {plain.returncode}, {plain.stdout!r}), "
                        f"stderr:\n{rec.stderr}")
        return
    own = run_fixture.program_counts(rec.stderr)
    if own != run_fixture.program_counts(plain.stderr):
        problems.append(f"{variant}: the program's own counts differ under callmon: {own} "
                        f"(without: {run_fixture.program_counts(plain.stderr)})")
    rounds = 20
    # `tail`: kTail calls from the atexit handler, in the parent's own exit (after the
    # program printed its counts) when no child's exit ran it.
    expected = {"pwork": own["pwork"], "pleaf": own["pleaf"], "one_child": rounds,
                "wait_status": rounds, "main": 1,
                "tail": 500 if variant == "thread_uexit" else own["ptail"], "cleaf": 0,
                "cdeep": 0}
    if variant.startswith("thread"):
        expected.update({"one_child_thread": rounds, "child_thread": rounds})
    if not run_fixture.check_recording(
            a.callmon, data, problems, f"{variant}: ",
            status_of=lambda p, t: "unfinished"
            if variant in ("thread", "thread_pexit") and t.get("tid") == p.get("pid")
            else "finished"):
        return
    check_end(a, data, variant, problems)
    traced, err = run_fixture.recorded_counts(a.callmon, data)
    if err:
        problems.append(f"{variant}: {err}")
        return
    for name, want in expected.items():
        if traced.get(name, 0) != want:
            problems.append(f"{variant}: {name}: {traced.get(name, 0)} call(s) recorded, "
                            f"expected {want}")


def main():
    a = run_fixture.program_test_args(__doc__,
                                      ["cyg", "fentry", "pg", "patchable", "patch", "xray"])
    exe = run_fixture.build_program(a, "vfork_exit.c", libs=["-pthread"])
    problems = []
    for variant in VARIANTS:
        check_run(a, exe, variant, problems)
    return run_fixture.report_problems(problems)


if __name__ == "__main__":
    sys.exit(main())
