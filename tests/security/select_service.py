#!/usr/bin/env python3
"""Promise: only the recorded program may talk to `callmon record`'s name-selection service,
only about files it has mapped, and nobody can hold the service (docs/security.md).

While `callmon record --include` runs (as root), a second user (nobody) finds the service's
abstract socket in /proc/net/unix and (a) asks, in the protocol's old form and in the keyed
form with a guessed key, about a root-only ELF file it cannot read: it must get no answer;
(b) connects and sends nothing: the service must drop it within 3 s (it used to hold the
single-threaded service for 10 s). Then a recorded program (python, holding the key in its
environment) asks about that root-only file, which it has not mapped: no answer; and about
its own executable, which it has mapped: answered. Exit 0 passed, 1 failed, 77 skipped."""
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common

# Run as nobody: argv[1] = the socket's name (without '@'), argv[2] = the secret file.
ATTACKER = r'''
import socket, struct, sys, time
name, path = sys.argv[1], sys.argv[2].encode()
def ask(request):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(4)
    try:
        s.connect("\0" + name)
        s.sendall(request)
        reply = s.recv(24)
    except OSError:
        reply = b""
    s.close()
    return len(reply) == 24 and struct.unpack("<I", reply[:4])[0] == 0x52534d43
old = struct.pack("<II", 0x51534d43, len(path)) + path
keyed = struct.pack("<II16s", 0x32534d43, len(path), bytes(16)) + path
print("old-form answered" if ask(old) else "old-form refused")
print("guessed-key answered" if ask(keyed) else "guessed-key refused")
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(6)
s.connect("\0" + name)
t0 = time.monotonic()
try:
    s.recv(1)
except OSError:
    pass
print("silent held %.1f" % (time.monotonic() - t0))
'''

# Run under callmon record: asks with the key of its own CALLMON_SELECT, read where the
# runtime reads it, in the environment the process started with (the runtime takes its
# variables out of `environ`, so the program's os.environ lacks it).
ASKER = r'''
import os, socket, struct, sys
start_env = dict(e.split("=", 1) for e in open("/proc/self/environ").read().split("\0") if "=" in e)
service = start_env.get("CALLMON_SELECT", "")[1:]
name, _, key = service.partition("#")
def ask(path):
    path = path.encode()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect("\0" + name)
        k = bytes.fromhex(key or "00" * 16)
        s.sendall(struct.pack("<II16s", 0x32534d43, len(path), k) + path)
        reply = s.recv(24)
    except (OSError, ValueError):
        reply = b""
    s.close()
    return len(reply) == 24 and struct.unpack("<II", reply[:8]) == (0x52534d43, 0)
print("unmapped answered" if ask(sys.argv[1]) else "unmapped refused")
print("mapped answered" if ask(os.path.realpath("/proc/self/exe")) else "mapped refused")
'''


def service_name(callmon_pid):
    prefix = "@callmon-select-%d-" % callmon_pid
    with open("/proc/net/unix") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 8 and fields[7].startswith(prefix):
                return fields[7][1:]
    return None


def main():
    a = common.setup()
    common.need_second_user()
    fib = common.build_fib(a.cc, a.work)
    secret_dir = os.path.join(a.work, "secret")
    os.mkdir(secret_dir, 0o700)
    secret = os.path.join(secret_dir, "fib")
    shutil.copy(fib, secret)
    os.chmod(secret, 0o600)
    attacker = os.path.join(a.work, "attacker.py")
    asker = os.path.join(a.work, "asker.py")
    for path, text in ((attacker, ATTACKER), (asker, ASKER)):
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o644)
    failures = []

    rec = subprocess.Popen([a.callmon, "record", "--include", "fib", "-o",
                            os.path.join(a.work, "rec"), "--", "sleep", "6"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    name = None
    for _ in range(500):
        name = service_name(rec.pid)
        if name:
            break
        time.sleep(0.01)
    if not name:
        rec.kill()
        common.fail("the service's socket never showed in /proc/net/unix")
    out = common.run(common.as_nobody([sys.executable, attacker, name, secret]), timeout=30)
    print(out.stdout + out.stderr, end="")
    for line in out.stdout.splitlines():
        if line.endswith("answered"):
            failures.append("another user got an answer (%s)" % line)
        if line.startswith("silent held") and float(line.split()[-1]) > 3.0:
            failures.append("a silent client held the service %s s" % line.split()[-1])
    if "silent held" not in out.stdout:
        failures.append("the attacker did not run to its end")
    if rec.poll() is not None:
        failures.append("the recording ended before the attacker did: its refusals prove nothing")
    rec_out, rec_err = rec.communicate(timeout=30)
    if rec.returncode != 0:
        failures.append("record failed: " + rec_err)

    out = common.run([a.callmon, "record", "--include", "fib", "-o", os.path.join(a.work, "rec2"),
                      "--", sys.executable, asker, secret], timeout=60)
    print(out.stdout + out.stderr, end="")
    if "unmapped refused" not in out.stdout:
        failures.append("the recorded program got an answer about a file it has not mapped")
    if "mapped answered" not in out.stdout.replace("unmapped", ""):
        failures.append("the recorded program got no answer about its own executable")
    if failures:
        common.fail("; ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
