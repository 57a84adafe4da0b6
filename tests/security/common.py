"""Shared by the security tests (tests/security): the command line, a fresh scratch
directory, running a command as a second, unprivileged user, and the fixture program."""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(os.path.dirname(HERE), "programs")
NOBODY = 65534


def setup():
    """Parses --callmon --cc --work; makes WORK empty and world-traversable (the second
    user works in it too). Returns the parsed arguments."""
    p = argparse.ArgumentParser()
    p.add_argument("--callmon", required=True)
    p.add_argument("--cc", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    os.chmod(a.work, 0o777)
    return a


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def need_second_user():
    """Skips unless we are root and can run commands as `nobody` (setpriv)."""
    if os.geteuid() != 0:
        skip("needs root, to run a second, unprivileged user (nobody) beside it")
    if shutil.which("setpriv") is None:
        skip("needs setpriv (util-linux) to run a command as nobody")
    r = subprocess.run(as_nobody(["true"]), capture_output=True)
    if r.returncode != 0:
        skip("cannot run a command as nobody: " + r.stderr.decode(errors="replace").strip())


def as_nobody(cmd):
    """`cmd` run as user and group nobody, without supplementary groups or capabilities."""
    return ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups",
            "--inh-caps=-all", "--"] + cmd


def build_fib(cc, work):
    """tests/programs/fib.c built with -finstrument-functions into WORK/fib."""
    out = os.path.join(work, "fib")
    subprocess.run([cc, "-O2", "-finstrument-functions", "-I", PROGRAMS, "-o", out,
                    os.path.join(PROGRAMS, "fib.c")], check=True)
    return out


def build_source(cc, work, name, text, extra=()):
    """C source `text` written to WORK/name.c and built -O2 -pthread -finstrument-functions
    (and `extra`) into WORK/name; its path."""
    src = os.path.join(work, name + ".c")
    with open(src, "w") as f:
        f.write(text)
    out = os.path.join(work, name)
    subprocess.run([cc, "-O2", "-pthread", "-finstrument-functions", *extra, "-o", out, src],
                   check=True)
    return out


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 60)
    return subprocess.run(cmd, **kw)
