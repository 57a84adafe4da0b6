#!/usr/bin/env python3
"""The terminal side of the reading commands (tools/callmon/pager.*, docs/terminal.md),
driven through a pseudo-terminal (label `cli`).

PAGER is a small script that copies what it reads to a file (and its LESS variable to
another), so each case can tell whether callmon paged, what went through the pager and
what stayed on the terminal. Cases: each paging command pages on a terminal and never when
its stdout is a pipe; --no-pager, PAGER=cat and an empty PAGER turn it off and
CALLMON_PAGER wins over PAGER; errors and the exit status come through the pager; a pager
that quits at once (before reading) leaves callmon's status unchanged and prints no
"Broken pipe"; colours follow --color, NO_COLOR and the terminal; replay's header and TID
column.
"""
import argparse
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time

ESC = "\x1b["


def run_tty(argv, env, stdin_pipe=False, timeout=30):
    """Runs argv with stdout and stderr on a fresh pseudo-terminal. Returns (status,
    terminal text)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    out = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if fd in r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            out += data
        else:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status), out.decode(errors="replace")
    else:
        os.kill(pid, signal.SIGKILL)
        raise SystemExit(f"timeout: {argv}")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


class Checker:
    def __init__(self):
        self.failures = 0

    def check(self, cond, what, detail=""):
        if cond:
            print(f"ok: {what}")
        else:
            self.failures += 1
            print(f"FAIL: {what}\n{detail[-3000:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--make-trace", required=True)
    ap.add_argument("--traces", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    c = Checker()

    # Recordings: the two-thread golden trace, and a long one (a few hundred KB of replay,
    # more than a pipe holds) for the early quit.
    threads = os.path.join(a.work, "threads.data")
    subprocess.run([a.make_trace, os.path.join(a.traces, "threads.txt"), threads], check=True)
    big_txt = os.path.join(a.work, "big.txt")
    with open(big_txt, "w") as f:
        f.write("process 700.0 pid 700 ppid 1 exe /bin/big\nsymbol 1000 main\n"
                "symbol 1100 slow\nsymbol 1200 fast\nsymbol 1300 mid\nthread 700\nenter 0 main\n")
        t = 10
        for i in range(20000):
            f.write(f"enter {t} fast\nexit {t + 50}\n")
            t += 100
        f.write(f"enter {t} mid\nexit {t + 5_000}\n")
        t += 5_010
        f.write(f"enter {t} slow\nexit {t + 2_000_000}\n")
        t += 2_000_010
        f.write(f"exit {t}\nend {t}\n")
    big = os.path.join(a.work, "big.data")
    subprocess.run([a.make_trace, big_txt, big], check=True)

    got = os.path.join(a.work, "pager.got")
    less_env = os.path.join(a.work, "pager.less")
    pager = os.path.join(a.work, "pager.sh")
    with open(pager, "w") as f:
        f.write(f'#!/bin/sh\nprintf "%s" "$LESS" > {less_env}\ncat > {got}\n')
    os.chmod(pager, 0o755)
    quitter = os.path.join(a.work, "quit.sh")  # a pager the user quits at once
    with open(quitter, "w") as f:
        f.write(f"#!/bin/sh\n: > {got}\nexit 0\n")
    os.chmod(quitter, 0o755)

    base = {k: v for k, v in os.environ.items()
            if k not in ("PAGER", "CALLMON_PAGER", "LESS", "NO_COLOR")}
    base["TERM"] = "xterm"

    def env(**kw):
        e = dict(base)
        e.update({k: v for k, v in kw.items() if v is not None})
        return e

    def reset():
        for p in (got, less_env):
            if os.path.exists(p):
                os.remove(p)

    def paged_text():
        return open(got, errors="replace").read() if os.path.exists(got) else None

    cm = a.callmon
    # Every paging command pages on a terminal.
    for args in (["replay"], ["report"], ["graph"], ["graph", "--tree"], ["info"],
                 ["diff", threads], ["coverage"]):
        reset()
        argv = [cm] + args[:1] + ["-d", threads] + args[1:] if args[0] != "diff" else \
            [cm, "diff", threads, threads]
        status, term = run_tty(argv, env(PAGER=pager))
        text = paged_text()
        c.check(status == 0 and text and len(text) > 20,
                f"{' '.join(args[:2])}: paged on a terminal", f"status {status}\n{term}\n{text}")
        if args[0] == "replay":
            c.check(open(less_env).read() == "FRSX", "LESS=FRSX set for the pager")
            c.check(text and "main()" in text and "compute()" in text,
                    "replay: the whole tree went through the pager", str(text))

    # Not a terminal: never paged; the output is on the pipe.
    reset()
    p = subprocess.run([cm, "replay", "-d", threads], env=env(PAGER=pager),
                       capture_output=True, text=True)
    c.check(p.returncode == 0 and paged_text() is None and "compute()" in p.stdout,
            "replay piped: not paged", p.stdout + p.stderr)
    reset()
    p = subprocess.run([cm, "report", "-d", threads], env=env(PAGER=pager),
                       capture_output=True, text=True)
    c.check(p.returncode == 0 and paged_text() is None and ESC not in p.stdout,
            "report piped: not paged, not coloured", p.stdout)

    # --no-pager, PAGER=cat, PAGER empty: the output goes to the terminal itself.
    for what, e, extra in (("--no-pager", env(PAGER=pager), ["--no-pager"]),
                           ("PAGER=cat", env(PAGER="cat"), []),
                           ("PAGER empty", env(PAGER=""), []),
                           ("CALLMON_PAGER=cat over PAGER", env(PAGER=pager, CALLMON_PAGER="cat"),
                            [])):
        reset()
        status, term = run_tty([cm, "replay", "-d", threads] + extra, e)
        c.check(status == 0 and paged_text() is None and "compute()" in term,
                f"{what}: not paged", term)
    reset()
    status, term = run_tty([cm, "report", "-d", threads], env(PAGER="cat", CALLMON_PAGER=pager))
    c.check(status == 0 and paged_text() is not None, "CALLMON_PAGER wins over PAGER", term)

    # An error and its status come through: the message in the pager (stderr was a
    # terminal), callmon's own status.
    reset()
    status, term = run_tty([cm, "replay", "-d", threads, "--thread", "4242"], env(PAGER=pager))
    text = paged_text() or ""
    c.check(status == 1 and "no thread 4242" in text, "an error goes through the pager, status 1",
            f"status {status}\nterm: {term}\npager: {text}")
    # A usage error is not paged (found before the pager starts).
    reset()
    status, term = run_tty([cm, "report", "-d", threads, "--focus", "("], env(PAGER=pager))
    c.check(status == 2 and paged_text() is None and "bad regex" in term,
            "a usage error: status 2, on the terminal", term)

    # The user quits the pager before the output is written: status unchanged, no noise.
    for cmd in ("replay", "report"):
        reset()
        status, term = run_tty([cm, cmd, "-d", big], env(PAGER=quitter))
        c.check(status == 0 and "Broken pipe" not in term and "error" not in term,
                f"{cmd}: pager quit at once: status 0, quiet", f"status {status}\n{term}")
    reset()
    status, term = run_tty([cm, "replay", "-d", big, "--thread", "4242"], env(PAGER=quitter))
    c.check(status == 1, "pager quit: an error's status still comes through",
            f"status {status}\n{term}")

    # Colours: on the terminal by default; not with NO_COLOR or --color=never; always with
    # --color=always, even piped.
    status, term = run_tty([cm, "replay", "-d", big, "--no-pager"], env())
    c.check(status == 0 and ESC + "31m" in term and ESC + "33m" in term,
            "replay on a terminal: ms in red, us in yellow", term[-500:])
    status, term = run_tty([cm, "report", "-d", big, "--no-pager"], env(NO_COLOR="1"))
    c.check(status == 0 and ESC not in term, "NO_COLOR: no colour", term)
    status, term = run_tty([cm, "graph", "-d", big, "--no-pager", "--color=never"], env())
    c.check(status == 0 and ESC not in term, "--color=never: no colour", term)
    p = subprocess.run([cm, "report", "-d", big, "--color=always"], env=env(NO_COLOR="1"),
                       capture_output=True, text=True)
    c.check(p.returncode == 0 and ESC + "31m" in p.stdout, "--color=always colours a pipe",
            p.stdout)
    reset()
    status, term = run_tty([cm, "replay", "-d", big], env(PAGER=pager))
    c.check(ESC + "31m" in (paged_text() or ""), "colours go through the pager")
    p = subprocess.run([cm, "replay", "-d", big, "--color=sometimes"], env=env(),
                       capture_output=True, text=True)
    c.check(p.returncode == 2 and p.stderr.count("\n") == 1, "--color=sometimes: usage error",
            p.stderr)

    # replay's header; the TID column only when several threads are shown.
    p = subprocess.run([cm, "replay", "-d", threads], env=env(), capture_output=True, text=True)
    lines = p.stdout.splitlines()
    c.check(lines[0].split() == ["#", "DURATION", "TID", "|", "FUNCTION"],
            "replay: header with TID", p.stdout)
    c.check(any(l.split("|")[0].strip().endswith("[    601]") for l in lines),
            "replay: TID on each line of several threads", p.stdout)
    p = subprocess.run([cm, "replay", "-d", threads, "--thread", "601"], env=env(),
                       capture_output=True, text=True)
    lines = p.stdout.splitlines()
    c.check(lines[0].split() == ["#", "DURATION", "|", "FUNCTION"] and "[" not in p.stdout,
            "replay of one thread: no TID column", p.stdout)

    print(f"{c.failures} failure(s)")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
