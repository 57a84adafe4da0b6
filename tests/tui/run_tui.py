#!/usr/bin/env python3
"""End-to-end test of `callmon tui` (docs/tui.md), driven in tmux like a user at a terminal.

Records tui_fixture.c, starts `callmon tui` in a detached tmux session of 120x40 on a private
socket, sends keys and reads the screen back (capture-pane -p) after each step: the call tree
is shown, folding hides and shows a subtree, the flat profile's figures are report's, sorting
by another column changes the order, search finds a folded function, the callers/callees view,
the thread picker and the help screen open, and `q` ends the program with status 0. Also:
without a terminal, tui says it needs one and exits non-zero.

Fails (with a message) when tmux is missing: it is a build dependency (scripts/setup.sh).
Exit 0 passed, 1 failed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(os.path.dirname(HERE), "programs")
FAILURES = []


def check(cond, what, screen=None):
    if cond:
        print(f"ok: {what}")
        return
    print(f"FAIL: {what}")
    if screen is not None:
        print("---- screen ----\n" + screen + "\n----------------")
    FAILURES.append(what)


class Tmux:
    """One tmux server on a private socket, one session running the command."""

    def __init__(self, tmux, socket):
        self.base = [tmux, "-S", socket]

    def run(self, *args):
        return subprocess.run(self.base + list(args), capture_output=True, text=True,
                              check=True).stdout

    def start(self, command):
        self.run("new-session", "-d", "-x", "120", "-y", "40", "-s", "tui", command)

    def keys(self, *keys):
        self.run("send-keys", "-t", "tui", *keys)

    def screen(self):
        return self.run("capture-pane", "-p", "-t", "tui")

    def wait_for(self, pred, timeout=15.0):
        """The first settled screen for which pred(screen) holds, or the last one after
        timeout. Settled: two captures 0.1 s apart agree — a capture can catch the program
        mid-repaint (a loaded machine caught the flat profile with rows of the old and the
        new sort order mixed), and that screen must not be judged."""
        end = time.monotonic() + timeout
        prev = None
        while True:
            s = self.screen()
            if (pred(s) and s == prev) or time.monotonic() > end:
                return s
            prev = s
            time.sleep(0.1)

    def kill(self):
        subprocess.run(self.base + ["kill-server"], capture_output=True)


def rows(screen):
    """The body lines of a screen: between the column heads and the status line."""
    lines = screen.rstrip("\n").split("\n")
    return [l for l in lines[2:-1] if l.strip()]


def row(screen, i):
    """Body line i of a screen (negative from the end), "" when there is none."""
    r = rows(screen)
    return r[i] if -len(r) <= i < len(r) else ""


def fields(line):
    """A table row's columns (separated by two spaces or more), the cursor mark dropped."""
    return [f for f in re.split(r"\s{2,}", line[1:].strip()) if f]


def report_table(callmon, rec):
    """`callmon report`'s rows: {function: [total, self, calls, avg, min, max]}."""
    out = subprocess.run([callmon, "report", "-d", rec], capture_output=True, text=True,
                         check=True).stdout
    table = {}
    for line in out.splitlines():
        if line.startswith("#") or line.lstrip().startswith("Total"):
            continue
        f = fields(" " + line)
        table[f[-1]] = f[:6]
    return table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tmux", default="tmux")
    a = ap.parse_args()

    tmux = shutil.which(a.tmux)
    if not tmux:
        print("FAIL: tmux not found: install it (scripts/setup.sh) to test the tui")
        return 1
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    exe = os.path.join(a.work, "tui_fixture")
    subprocess.run([a.cc, "-O2", "-finstrument-functions", "-pthread", "-I", PROGRAMS, "-o", exe,
                    os.path.join(HERE, "tui_fixture.c")], check=True)
    rec = os.path.join(a.work, "rec")
    subprocess.run([a.callmon, "record", "-o", rec, "--", exe], check=True,
                   capture_output=True)

    # Without a terminal: one line, non-zero.
    p = subprocess.run([a.callmon, "tui", "-d", rec], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    check(p.returncode != 0 and "needs a terminal" in p.stderr
          and p.stderr.count("\n") == 1, f"no terminal: exit {p.returncode}, {p.stderr!r}")

    status = os.path.join(a.work, "status")
    t = Tmux(tmux, os.path.join(a.work, "tmux.sock"))
    t.kill()
    try:
        t.start(f"{a.callmon} tui -d {rec}; echo $? > {status}; sleep 600")

        # The call tree, opened: main's subtree, the worker thread's.
        s = t.wait_for(lambda s: "tokenize" in s and "worker_step" in s)
        check("[call tree]" in s and "- main" in s and "parse_line" in s and "tokenize" in s
              and "worker_loop" in s, "the call tree is shown", s)
        check(row(s, 0).startswith(">") and "main" in row(s, 0), "cursor on main", s)

        # End and Home move the cursor to the last row and back.
        t.keys("End")
        s = t.wait_for(lambda s: row(s, -1).startswith(">"))
        check(row(s, -1).startswith(">") and "worker_step" in row(s, -1), "End: last row", s)
        t.keys("Home")
        s = t.wait_for(lambda s: row(s, 0).startswith(">"))
        check(row(s, 0).startswith(">"), "Home: first row", s)

        # Folding: Enter on main hides its subtree, Enter again shows it.
        t.keys("Enter")
        s = t.wait_for(lambda s: "+ main" in s)
        check("+ main" in s and "parse_line" not in s and "worker_loop" in s,
              "Enter folds main", s)
        t.keys("Enter")
        s = t.wait_for(lambda s: "- main" in s)
        check("parse_line" in s and "tokenize" in s, "Enter unfolds main", s)

        # The flat profile: report's figures, sorted by total; s moves the sort to Self,
        # then to Calls.
        t.keys("r")
        s = t.wait_for(lambda s: "[Total]" in s)
        report = report_table(a.callmon, rec)
        flat = {fields(l)[-1]: fields(l)[:6] for l in rows(s)}
        check(flat == report, f"flat profile has report's figures: {flat} vs {report}", s)
        by_total = [fields(l)[-1] for l in rows(s)]
        t.keys("s", "s")
        s = t.wait_for(lambda s: "[Calls]" in s)
        by_calls = [fields(l)[-1] for l in rows(s)]
        calls = [int(fields(l)[2]) for l in rows(s) if fields(l)[2].isdigit()]
        check(by_calls != by_total and by_calls[0] == "square" and calls == sorted(calls, reverse=True),
              f"sorting by calls changes the order: {by_calls}", s)

        # Search: fold everything in the tree, find cube; its parents unfold.
        t.keys("t", "C")
        s = t.wait_for(lambda s: "+ main" in s)
        check("cube" not in s, "C folds everything", s)
        t.keys("/", "cube", "Enter")
        # The cursor's row, not just "cube": the search prompt shows "/cube" while the keys
        # are being read (a loaded machine caught the screen then).
        s = t.wait_for(lambda s: any(l.startswith(">") and "cube" in l for l in rows(s)))
        cursor = [l for l in rows(s) if l.startswith(">")]
        check(len(cursor) == 1 and "cube" in cursor[0], "search finds cube", s)
        check("- compute" in s and "load_config" in s and "tokenize" not in s,
              "search unfolds only cube's parents", s)

        # Callers and callees of cube: compute calls it.
        t.keys("g")
        s = t.wait_for(lambda s: "Called by:" in s)
        check("compute" in row(s, 1) and "cube" in row(s, 2),
              "g shows cube's caller", s)
        t.keys("Up", "Enter")
        s = t.wait_for(lambda s: "square" in s)
        check("main" in s and "square" in s and "cube" in s, "Enter jumps to compute", s)

        # Thread picker: the second entry is the main thread.
        t.keys("T")
        s = t.wait_for(lambda s: "all threads (" in s)
        check("tid" in s, "the thread picker lists the threads", s)
        t.keys("Down", "Enter")
        s = t.wait_for(lambda s: "[call tree]  thread " in s)
        check("[call tree]  thread " in s and "main" in s and "worker_step" not in s,
              "picking a thread shows its calls only", s)

        # Help, then quit.
        t.keys("?")
        s = t.wait_for(lambda s: "Keys of callmon tui" in s)
        check("Keys of callmon tui" in s and "thread picker" in s, "? shows the help", s)
        t.keys("Escape")
        s = t.wait_for(lambda s: "[call tree]" in s)
        check("[call tree]" in s, "Esc closes the help", s)
        t.keys("q")
        end = time.monotonic() + 10
        while not os.path.exists(status) and time.monotonic() < end:
            time.sleep(0.1)
        time.sleep(0.2)
        code = open(status).read().strip() if os.path.exists(status) else "none"
        check(code == "0", f"q exits with status 0 (got {code})")
    finally:
        t.kill()

    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
