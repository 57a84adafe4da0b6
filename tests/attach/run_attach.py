#!/usr/bin/env python3
"""End-to-end tests of `callmon record -p PID` (docs/record.md, docs/patching.md "Attaching").

attach_server.c, built one way per --build (nop sleds of -fpatchable-function-entry or
-mnop-mcount, -pg -mfentry, -pg, -finstrument-functions) with --cc, is driven request by request through a pipe:
  counts  attach while every thread is blocked (main in read, workers in a condition wait),
          let it serve requests, detach, serve more, attach again, serve, detach, quit. Its
          output and exit status must be those of a run without attach, and each recording
          must count exactly the calls of the requests served while attached.
  open    detach while a request is in progress (a call open, and in the -pg modes its
          return address pointing into the runtime), then let it finish: output intact.
  fork    attach_fork.c: a child forked while attached records into its own files.
  churn   attach_churn.c: threads created and ending all the time, across two attaches.
  throwing  attach_throwing.cpp (--cc a C++ compiler): attached and detached five times
          while three threads throw and catch without pause: no std::terminate, output as
          without attach.
  unwind  attach_throw.cpp (--cc a C++ compiler): exceptions and longjmp through recorded
          calls while attached; output, status and counts as without attach.
  inherit attach while a worker blocks inside handle() -> work() -> read: those frames (and
          every thread's other open frames) are shown as inherited, as a fork child's; the
          calls made under them after the attach nest under them; work() and handle() end
          when they return (-pg modes: through the return addresses hijacked at the attach).
          Then the same with the fixture built without unwind tables: the stacks cannot be
          unwound, and the attach must work as before.
  filters --include/--exclude with -p (two attaches, each with its own filter), then -A/-R.
  parked  attach_parked.c, built with no flag and attached with --patch: a thread blocked in
          read(2) inside the first five bytes of the function being patched is moved into
          the trampoline's copy; its read finishes and is answered as without attach.
  sigparked  attach_parked.c again, its reader interrupted in that read(2) by SIGUSR1 and
          waiting in the handler (sigsuspend) at the attach: the pc its signal frame saved
          (the `syscall`, byte 2) is inside the jump's bytes; the attach moves it into the
          copy, so that the handler returns there and the read restarts.
  dlopen  the server dlopen's attach_plugin.c (built the same way) while attached, calls it,
          dlclose's it and loads it again, in two attaches (in the second it is loaded
          before the attach too): output and status as without attach, the plugin's calls
          (and its strlen) counted exactly, and after the detach its code in memory is its
          file's again (every patch made while attached undone, none written into the
          dlclose'd one).
          The same script recorded from the start counts the plugin's calls alike, and
          neither recording counts dlopen, dlsym or dlclose (not library calls).
  late    the plugin dlopen'ed through pointers to dlopen and dlsym taken at the start (no
          redirected GOT word sees the call) while attached: patched once callmon sees it in
          the memory map and a thread switches chunks; its calls then counted exactly.
          Built with gcc's five 1-byte-nop sleds, or with no flag under --patch, its sites
          cannot be written with its code running: callmon stops every thread and writes
          them (the late stop); the test waits for it, then the same counts.
  dlchurn a thread dlopen's, calls and dlclose's the plugin in a loop while callmon attaches
          and detaches six times: no detach finds its patches changed, no injected call fails.
  latechurn the same through pointers to dlopen, dlsym and dlclose taken at the start, while
          attached once: late passes and late stops for instances loaded and closed behind
          callmon's back; output and status as without attach, no patch found changed.
  inherit (above) also with --exclude=^handle$: the idle thread's frames by the filter.
  sigsled attach_sigsled.c (XRay build): a SIGTRAP handler that interrupted the main thread
          (single-stepping itself) between a patched sled's `mov` and its call/jmp waits
          until the detach; the pc its signal frame saved must then be where the compiled
          sled goes (past it, or to the exit sled's `ret`), not inside the compiled sled's
          nops.
  ucontext attach_ucontext.c: coroutines (swapcontext) switching while attached twice and
          suspended across each detach; output and status as without attach, each call of
          a request counted once.
  sigjmp  attach_sigjmp.c: a SIGALRM handler installed before the attach leaves by
          siglongjmp, now and then out of an interrupted hook, while attached twice; no
          event lost, the detach does not wait, sigaction shows the program's handler
          while attached and after, output and status as without attach.
  sigwin  attach_sigwin.c: a thread installs SIGALRM's handler through its PLT (GOT word) every
          20 us until the attach redirects that word (the last installs go to libc while the
          attach is set up); while attached the kernel must hold the runtime's wrapper, and with TEST_CALLMON_HOOK_SIGNAL=SIGALRM the handler
          leaves by siglongjmp out of hooks: no event lost, the detach on time, output and
          status as without attach, the program's handler back after the detach.
  sigmod  attach_sigmod.c, a program that records next to nothing, loads while attached two
          copies of attach_sigplugin.c (built the same way), each of whose constructors
          installs SIGUSR1's handler through the plugin's own GOT word (libc's then): one
          through the program's dlopen (the runtime's wrapper), one through a pointer taken
          at the start (behind the wrappers' back: no chunk switch of the program's asks for
          the pass, callmon must have it made). With TEST_CALLMON_HOOK_SIGNAL=SIGUSR1 the
          handler leaves hooks by siglongjmp. Each time the kernel must come to hold the
          runtime's wrapper (sigaction still showing the plugin's handler), the plugin's calls
          be counted exactly, nothing lost, the detach on time and the plugin's handler and
          code back after it, output and status as without attach.
  sigtramp attach_sigtramp.c (--build sled, fentry, pg, plain): a SIGTRAP handler that
          interrupted the runtime's exit trampoline waits until the detach has begun: the
          detach must wait for it (before, it emptied the shadow stack under it and the
          program died of SIGILL); output and status as without attach.
  moved   attach_moved.c (plain, --patch=.): a function that moves its frame (libffi's
          ffi_call_unix64's way) open at the detach: the attach refuses to patch it (before,
          its return after the detach found no frame: SIGILL); output and status as
          without attach.
  vfork   attach_vfork.c: vfork children calling instrumented functions before _exit or
          exec while attached: the parent's calls counted exactly, none of the children's.
  exit    attach_exit.c: a handler installed before the attach calls exit() while its
          signal interrupted a hook (forced by TEST_CALLMON_HOOK_SIGNAL): the atexit
          handler's and destructor's calls counted exactly, nothing lost.
  --attach-arg adds an option to every `callmon record -p` (--patch=. for the plain build:
  function entries patched at attach). Library calls (strlen, memcpy) are counted exactly
  in counts.
  errors  (build-independent) a missing PID, a static program (no C library to load the
          runtime with), callmon itself, a process started under `callmon record`, a
          second attach while one is recording, and -p with a bad --patch, --include or -A
          or --patch-module alone: each one line, non-zero status.
Exit 0 passed, 1 failed, 77 skipped (compiler missing, ptrace not permitted).
"""
import argparse
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "attach_server.c")
THROW_SOURCE = os.path.join(HERE, "attach_throw.cpp")
CHURN_SOURCE = os.path.join(HERE, "attach_churn.c")
FORK_SOURCE = os.path.join(HERE, "attach_fork.c")
PARKED_SOURCE = os.path.join(HERE, "attach_parked.c")
PLUGIN_SOURCE = os.path.join(HERE, "attach_plugin.c")
SIGSLED_SOURCE = os.path.join(HERE, "attach_sigsled.c")
UCONTEXT_SOURCE = os.path.join(HERE, "attach_ucontext.c")
SIGJMP_SOURCE = os.path.join(HERE, "attach_sigjmp.c")
VFORK_SOURCE = os.path.join(HERE, "attach_vfork.c")
EXIT_SOURCE = os.path.join(HERE, "attach_exit.c")
SIGWIN_SOURCE = os.path.join(HERE, "attach_sigwin.c")
SIGTRAMP_SOURCE = os.path.join(HERE, "attach_sigtramp.c")
MOVED_SOURCE = os.path.join(HERE, "attach_moved.c")
THROWING_SOURCE = os.path.join(HERE, "attach_throwing.cpp")
SIGMOD_SOURCE = os.path.join(HERE, "attach_sigmod.c")
SIGPLUGIN_SOURCE = os.path.join(HERE, "attach_sigplugin.c")
# How attach_sigtramp.c sees that the attach's patch is in place, per build.
ATTACH_ARGS = []  # --attach-arg

BUILDS = {
    "sled": ["-fpatchable-function-entry=5"],
    "fentry": ["-pg", "-mfentry"],
    "pg": ["-pg"],
    "cyg": ["-finstrument-functions"],
    # clang only: XRay's sleds, patched while attached and put back at detach
    "xray": ["-fxray-instrument", "-fxray-instruction-threshold=1"],
    "plain": [],
    # gcc only, not position-independent; linked without -pg (docs/modes.md, "Nop sleds")
    "nopmcount": ["-fno-pie", "-pg", "-mfentry", "-mnop-mcount", "-mrecord-mcount"],
}

FAILURES = []


def expect(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def build(cc, work, kind, source=SOURCE, extra=()):
    name = os.path.splitext(os.path.basename(source))[0]
    exe = os.path.join(work, f"{name}_{os.path.basename(cc)}_{kind}" + ("_nocfi" if "-g0" in extra else ""))
    if kind == "nopmcount":
        subprocess.run([cc, "-O2", "-g", "-pthread", *BUILDS[kind], "-c", "-o", exe + ".o",
                        source], check=True)
        subprocess.run([cc, "-no-pie", "-pthread", "-o", exe, exe + ".o"], check=True)
        return exe
    subprocess.run([cc, "-O2", "-g", "-pthread", *BUILDS[kind], *extra, "-o", exe, source],
                   check=True)
    return exe


class Server:
    """The fixture, with its requests written to stdin and its answers read one by one."""

    def __init__(self, exe, prefix=()):
        self.hold_r, self.hold_w = os.pipe()
        self.p = subprocess.Popen([*prefix, exe, str(self.hold_r)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1,
                                  pass_fds=(self.hold_r,))
        self.lines = [self.p.stdout.readline()]

    @property
    def pid(self):
        return self.p.pid

    def send(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def request(self, line):
        self.send(line)
        self.lines.append(self.p.stdout.readline())

    def finish(self):
        self.send("Q")
        self.lines += self.p.stdout.readlines()
        status = self.p.wait(timeout=30)
        os.close(self.hold_r)
        os.close(self.hold_w)
        return "".join(self.lines), status


def blocked_in(pid, syscall_nr, fd=None):
    """Whether some thread of `pid` is blocked in system call `syscall_nr` (on `fd`)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False  # the process has ended
    for tid in tids:
        try:
            fields = open(f"/proc/{pid}/task/{tid}/syscall").read().split()
        except OSError:
            continue
        if fields and fields[0] == str(syscall_nr) and (fd is None or int(fields[1], 16) == fd):
            return True
    return False


def wait_blocked(pid, syscall_nr, fd=None):
    for _ in range(500):
        if blocked_in(pid, syscall_nr, fd):
            return True
        time.sleep(0.01)
    return False


class Attach:
    """`callmon record -p PID` in the background, until stop(). Its stderr goes to a file:
    a pipe read with readline() then communicate() lost the lines readline() had buffered."""

    def __init__(self, callmon, pid, out, extra=()):
        self.log = out + ".stderr"
        self.f = open(self.log, "w")
        self.p = subprocess.Popen([callmon, "record", "-p", str(pid), "-o", out, *ATTACH_ARGS,
                                   *extra], stderr=self.f)
        for _ in range(3000):
            if "\n" in open(self.log).read() or self.p.poll() is not None:
                break
            time.sleep(0.01)
        self.first = open(self.log).read()

    def stop(self):
        self.p.send_signal(signal.SIGINT)
        self.p.wait(timeout=60)
        self.f.close()
        return self.p.returncode, open(self.log).read()


def counts(callmon, data):
    r = subprocess.run([callmon, "report", "--format=json", "-d", data], capture_output=True,
                       text=True, timeout=60)
    if not expect(r.returncode == 0, f"report on {data}: {r.stderr.strip()}"):
        return {}
    return {f["short_name"]: f["calls"] for f in json.loads(r.stdout)["functions"]}


def info_ok(callmon, data, unmatched_ok=0):
    """info shows no problem (but up to `unmatched_ok` unmatched exits in all: a hook
    abandoned by a handler's siglongjmp may leave the tree a frame off, docs/runtime.md),
    says the recording was detached, and replay reads it."""
    r = subprocess.run([callmon, "info", "-d", data], capture_output=True, text=True, timeout=60)
    problems = [l.strip() for l in r.stdout[r.stdout.find("problems:"):].splitlines()[1:]
                if l.strip()]
    unmatched = [re.search(r": (\d+) unmatched exit\(s\)$", l) for l in problems]
    tolerated = (problems and all(unmatched) and
                 sum(int(m.group(1)) for m in unmatched) <= unmatched_ok)
    expect(r.returncode == 0 and ("problems:  none" in r.stdout or tolerated),
           f"info on {data}: {r.returncode} {r.stdout[-400:]} {r.stderr}")
    expect("detached while it ran on" in r.stdout, f"info on {data} says it was detached")
    # Times compensated: an attach has no exit calibration, so the one at the attach must
    # have measured the hooks (in the -pg and sled modes it measured glibc's no-op
    # __fentry__/mcount until stop 36: "recording cost not measured").
    r = subprocess.run([callmon, "info", "--format=json", "-d", data], capture_output=True,
                       text=True, timeout=60)
    procs = json.loads(r.stdout).get("processes", []) if r.returncode == 0 else []
    uncalibrated = [p.get("key") for p in procs if not p.get("probe_cost")]
    expect(procs and not uncalibrated,
           f"info on {data}: every process's probe cost measured (not in {uncalibrated})")
    r = subprocess.run([callmon, "replay", "-d", data], capture_output=True, text=True,
                       timeout=60)
    expect(r.returncode == 0, f"replay on {data}: {r.stderr.strip()}")


def xray_line(callmon, data):
    r = subprocess.run([callmon, "info", "-d", data], capture_output=True, text=True, timeout=60)
    return next((l.strip() for l in r.stdout.splitlines() if "XRay sleds" in l), "")


def reference(exe, script):
    s = Server(exe)
    for line in script:
        s.request(line)
    return s.finish()


def case_counts(a, exe):
    # k differs per phase so a call counted in the wrong recording shows.
    before, first, between, second, after = (["W 5"] * 2, ["W 7"] * 3, ["W 4"], ["W 9"] * 2,
                                             ["W 3"])
    ref_out, ref_status = reference(exe, before + first + between + second + after)
    s = Server(exe)
    for line in before:
        s.request(line)
    # Every thread is blocked: main in read(0), the workers in a condition wait.
    expect(wait_blocked(s.pid, 0, 0), "the server's main thread blocks in read")
    runs = []
    for n, script, k in ((1, first, 7), (2, second, 9)):
        data = os.path.join(a.work, f"{os.path.basename(exe)}.{n}")
        err = attached_requests(a, s, data, script, n)
        runs.append((data, len(script), k))
        for line in between if n == 1 else []:
            s.request(line)
    if a.build == "xray":
        expect(code_as_in_file(s.pid, exe), "the server's code after the detach is its file's")
        # `info` says what each attach patched as a start-up recording does (the xray-sleds
        # meta line), the second attach too (not both attaches' sleds together).
        start = os.path.join(a.work, f"{os.path.basename(exe)}.startup")
        subprocess.run([a.callmon, "record", "-o", start, "--", exe, "0"], input="Q\n",
                       capture_output=True, text=True, timeout=60)
        want = xray_line(a.callmon, start)
        expect(want.startswith("XRay sleds: "), f"{start}: info shows the XRay sleds: {want!r}")
        for n in (1, 2):
            data = os.path.join(a.work, f"{os.path.basename(exe)}.{n}")
            got = xray_line(a.callmon, data)
            expect(got == want, f"{data}: info says {got!r}, a start-up recording {want!r}")
    for line in after:
        s.request(line)
    out, status = s.finish()
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 3, f"exit status {status}, without attach {ref_status}")
    for data, requests, k in runs:
        c = counts(a.callmon, data)
        want = {"serve": requests, "step": requests * k, "leaf": requests * k}
        if "--no-libcall" not in ATTACH_ARGS:
            want.update({"strlen": requests, "memcpy": requests})
        got = {name: c.get(name, 0) for name in want}
        expect(got == want, f"{data}: counts {got}, expected {want}")
        info_ok(a.callmon, data)


def case_filters(a, exe):
    script = ["W 6"] * 2
    ref_out, ref_status = reference(exe, ["W 1"] + script * 3 + ["W 1"])
    s = Server(exe)
    s.request("W 1")
    expect(wait_blocked(s.pid, 0, 0), "the server's main thread blocks in read")
    # Each attach its own filter: the second's must not keep the first's.
    # The third: arguments and return values (-A, -R), no name filter.
    for n, option, want in ((1, ["--include=^(serve|leaf)$"], {"serve": 2, "step": 0, "leaf": 12}),
                            (2, ["--exclude=^leaf$"], {"serve": 2, "step": 12, "leaf": 0}),
                            (3, ["-A", "leaf@arg1/i64", "-R", "leaf@retval/i64"],
                             {"serve": 2, "step": 12, "leaf": 12})):
        data = os.path.join(a.work, f"{os.path.basename(exe)}.filter{n}")
        att = Attach(a.callmon, s.pid, data, option)
        expect("attached to process" in att.first, f"attach {n} {option}: {att.first.strip()}")
        for line in script:
            s.request(line)
        status, err = att.stop()
        expect(status == 0 and "detached" in err, f"detach {n}: {status} {err.strip()}")
        c = counts(a.callmon, data)
        got = {name: c.get(name, 0) for name in want}
        expect(got == want, f"{data} ({option}): counts {got}, expected {want}")
        if n == 3:
            r = subprocess.run([a.callmon, "replay", "-d", data], capture_output=True, text=True,
                               timeout=60)
            expect(r.stdout.count("leaf(5) = 16;") == 2, f"{data}: replay shows arguments:\n"
                   + "\n".join(r.stdout.splitlines()[:20]))
    s.request("W 1")
    out, status = s.finish()
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 3, f"exit status {status}, without attach {ref_status}")


def attached_requests(a, server, data, script, n, hold=0.0):
    """Attaches to `server` into `data`, waits `hold` seconds, sends `script` while attached,
    detaches; expects both to succeed and returns the detach's stderr (`n` names the attach
    in messages)."""
    att = Attach(a.callmon, server.pid, data)
    expect("attached to process" in att.first, f"attach {n}: {att.first.strip()}")
    time.sleep(hold)
    for line in script:
        server.request(line)
    status, err = att.stop()
    expect(status == 0 and "detached" in err, f"detach {n}: {status} {err.strip()}")
    return err


class ParkedReader(Server):
    """attach_parked.c, its reader thread reading the pipe Server holds: R writes a byte to
    the pipe first."""

    def blocked(self, what, state=0):
        """Expects the reader blocked in read (state 0) or in its handler (130)."""
        expect(wait_blocked(self.p.pid, state, self.hold_r if state == 0 else None), what)

    def request(self, line, byte=None):
        if byte is not None:
            os.write(self.hold_w, bytes([byte]))
        try:
            super().request(line)
        except BrokenPipeError:
            expect(False, f"the program ended before {line}: {self.p.wait(timeout=30)}")


def same_as_without_attach(run):
    """run(attach) -> (output, status): the same either way, exit status 7."""
    ref_out, ref_status = run(False)
    out, status = run(True)
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 7, f"exit status {status}, without attach {ref_status}")


def case_parked(a, exe):
    # Bytes the reader thread reads, one per R; attached for the 2nd-4th and the 6th-7th.
    data_bytes = [11, 12, 13, 14, 15, 16, 17, 18]

    def run(attach):
        pr = ParkedReader(exe)
        att = None
        for i, b in enumerate(data_bytes):
            # The reader is blocked in parked_read's read(2), its rip inside the jump's bytes.
            pr.blocked(f"read {i}: the reader blocks in read")
            if attach and i in (1, 5):
                data = os.path.join(a.work, f"{os.path.basename(exe)}.parked{i}")
                att = (Attach(a.callmon, pr.p.pid, data), data)
                expect("attached to process" in att[0].first and
                       "1 thread(s) moved out of a function's first bytes" in att[0].first,
                       f"attach at read {i}: {att[0].first.strip()}")
            pr.request("R", b)
            if att and i in (3, 6):
                # Detached with the reader blocked again, now inside the trampoline's copy.
                pr.blocked(f"read {i}: the reader blocks again")
                status, err = att[0].stop()
                expect(status == 0 and "detached" in err, f"detach: {status} {err.strip()}")
                calls = counts(a.callmon, att[1]).get("parked_read", 0)
                # Entered while attached: one per answered read (the one open at the attach
                # has no entry; the one open at the detach has).
                want = 3 if i == 3 else 2
                expect(calls == want, f"{att[1]}: parked_read {calls} calls, expected {want}")
                att = None
        return pr.finish()

    same_as_without_attach(run)


def case_sigparked(a, exe):
    def run(attach):
        pr = ParkedReader(exe)
        pr.blocked("the reader blocks in read")
        pr.request("R", 11)
        pr.blocked("the reader blocks in read again")
        pr.request("S")
        pr.blocked("the reader waits in its SIGUSR1 handler", 130)
        att = None
        if attach:
            data = os.path.join(a.work, f"{os.path.basename(exe)}.sigparked")
            att = Attach(a.callmon, pr.p.pid, data)
            expect("attached to process" in att.first and
                   "1 signal handler(s) will return into a moved copy" in att.first,
                   f"attach: {att.first.strip()}")
        pr.request("U")  # the handler returns: into the trampoline's copy, the read restarts
        pr.blocked("the read restarts after the handler")
        pr.request("R", 12)
        pr.blocked("the reader blocks in read once more")
        pr.request("R", 13)
        pr.blocked("the reader blocks in read at the end")
        if att:
            status, err = att.stop()
            expect(status == 0 and "detached" in err, f"detach: {status} {err.strip()}")
            calls = counts(a.callmon, data).get("parked_read", 0)
            # The read open at the attach (restarted in the copy) has no entry; then two.
            expect(calls == 2, f"{data}: parked_read {calls} calls, expected 2")
        pr.request("R", 14)
        return pr.finish()

    same_as_without_attach(run)


def case_sigsled(a, exe):
    ref = subprocess.run([exe, "free"], capture_output=True, text=True, timeout=60)
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         bufsize=1)
    expect(p.stdout.readline() == "ready\n", "the fixture starts")
    data = os.path.join(a.work, f"{os.path.basename(exe)}.sigsled")
    att = Attach(a.callmon, p.pid, data)
    expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    # Attached: the fixture single-steps itself into the first patched sled.
    p.stdin.write("go\n")
    p.stdin.flush()
    line = p.stdout.readline()
    expect(line == "caught\n", f"a handler interrupted a patched sled: {line!r}")
    status, err = att.stop()
    expect(status == 0 and "detached" in err, f"detach: {status} {err.strip()}")
    expect("1 signal handler(s) interrupted inside a patched XRay sled" in err,
           f"the detach says it moved the handler's saved pc: {err.strip()}")
    rest = p.stdout.read()
    status = p.wait(timeout=60)
    expect(rest in ("returns past the sled\n" + ref.stdout.split("\n", 1)[1],
                    "returns to the ret\n" + ref.stdout.split("\n", 1)[1]),
           f"the handler returns where the compiled sled goes, then the program's sum:\n{rest}"
           f"(without attach:\n{ref.stdout})")
    expect(status == ref.returncode == 0, f"exit status {status}, without attach {ref.returncode}")
    r = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True, timeout=60)
    expect(r.returncode == 0 and "problems:  none" in r.stdout, f"info on {data}: {r.stdout[-400:]}")


def runtime_returns(pid):
    """The addresses of the runtime's exit trampolines (callmon_pg_return,
    callmon_patched_return) in process `pid`, from its maps and the library's symbols."""
    base, path = None, None
    for line in open(f"/proc/{pid}/maps"):
        f = line.split()
        if len(f) >= 6 and os.path.basename(f[5]) == "libcallmon.so" and int(f[2], 16) == 0:
            base, path = int(f[0].split("-")[0], 16), f[5]
            break
    if base is None:
        return set()
    out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
    return {base + int(f[0], 16) for f in (l.split() for l in out.splitlines())
            if len(f) == 3 and f[2] in ("callmon_pg_return", "callmon_patched_return")}


def suspended_words(server, wanted):
    """How many words of the fixture's suspended coroutine stacks (live parts) are in
    `wanted` (attach_ucontext.c's A request says where they are)."""
    server.request("A")
    f = server.lines.pop().split()
    n = 0
    with open(f"/proc/{server.pid}/mem", "rb") as mem:
        for sp, end in ((int(f[1], 16), int(f[2], 16)), (int(f[3], 16), int(f[4], 16))):
            mem.seek(sp)
            data = mem.read(end - sp)
            n += sum(1 for i in range(0, len(data) - 7, 8)
                     if int.from_bytes(data[i:i + 8], "little") in wanted)
    return n


def case_ucontext(a, exe):
    # Two attaches, each with switching while attached; both coroutines stay suspended
    # (with frames opened while attached) across each detach, then run again.
    script = ["S 3000", "S 5000", "S 2000", "S 4000", "S 1000"]
    ref_out, ref_status = reference(exe, script)
    s = Server(exe)
    s.request(script[0])
    runs = []
    for n, line in ((1, script[1]), (2, script[3])):
        data = os.path.join(a.work, f"{os.path.basename(exe)}.{n}")
        attached_requests(a, s, data, [line], n)
        runs.append((data, int(line.split()[1])))
        # Both coroutines are suspended with frames opened while attached: none of their
        # return addresses may still lead into the runtime.
        tramps = runtime_returns(s.pid)
        expect(a.build in ("cyg", "xray") or tramps, "the runtime's trampolines are found")
        left = suspended_words(s, tramps) if tramps else 0
        expect(left == 0, f"detach {n}: {left} return address(es) of suspended coroutines "
                          "still lead to the runtime's exit trampoline")
        s.request(script[2 if n == 1 else 4])
    out, status = s.finish()
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 3, f"exit status {status}, without attach {ref_status}")
    for data, k in runs:
        c = counts(a.callmon, data)
        # The request's calls, each once: a resumed call is a continuation, not a new one
        # (the first resumption of a coroutine suspended before the attach is an inherited
        # piece, not counted either).
        got = {name: c.get(name, 0) for name in ("leaf", "yield_to")}
        want = {"leaf": 2 * k, "yield_to": 3 * k}
        expect(got == want, f"{data}: counts {got}, expected {want}")
        info_ok(a.callmon, data)


def case_sigjmp(a, exe):
    # The handler was installed at start, before either attach.
    script = ["V", "J 30", "V", "J 90", "V", "J 30", "V", "J 90", "V"]
    ref_out, ref_status = reference(exe, script)
    s = Server(exe)
    s.request(script[0])
    for n in (1, 2):
        data = os.path.join(a.work, f"{os.path.basename(exe)}.{n}")
        t0 = time.monotonic()
        attached_requests(a, s, data, script[1 + 4 * (n - 1):4 + 4 * (n - 1)], n)
        took = time.monotonic() - t0
        s.request(script[4 * n])
        # At most one unmatched exit per jump (each abandons at most one hook), as
        # tests/e2e/run_sigjmp.py allows one abandoned call per jump.
        jumps = sum(int(r.split()[1]) for r in script[1 + 4 * (n - 1):4 + 4 * (n - 1)]
                    if r.startswith("J "))
        info_ok(a.callmon, data, unmatched_ok=jumps)
        # 90 jumps of a 200 us timer take well under a second: a detach that waited for
        # a thread "inside a hook" went on until the program's end (the test's 180 s).
        expect(took < 60, f"attach {n}: the attach and detach took {took:.1f} s")
    out, status = s.finish()
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 3, f"exit status {status}, without attach {ref_status}")


def case_sigwin(a, exe):
    script = ["W", "R 20000", "R 20000"]
    ref = subprocess.run([exe, "free"], input="".join(l + "\n" for l in script + ["Q"]),
                         capture_output=True, text=True, timeout=120)
    env = dict(os.environ, TEST_CALLMON_HOOK_SIGNAL=str(int(signal.SIGALRM)))
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, bufsize=1, env=env)
    out = [p.stdout.readline()]

    def ask(line):
        p.stdin.write(line + "\n")
        p.stdin.flush()
        answer = p.stdout.readline()
        if not line.startswith("K"):
            out.append(answer)
        return answer

    # callmon calls into the main thread, blocked in read; the installer thread runs.
    expect(wait_blocked(p.pid, 0, 0), "the main thread blocks in read")
    data = os.path.join(a.work, f"{os.path.basename(exe)}.sigwin")
    t0 = time.monotonic()
    att = Attach(a.callmon, p.pid, data)
    expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    ask(script[0])
    k = ask("K")
    expect(k == "kernel: other, view: ours\n",
           f"while attached the kernel holds the runtime's wrapper for the handler installed "
           f"during the attach, sigaction shows the program's: {k!r}")
    for line in script[1:]:
        ask(line)
    status, err = att.stop()
    took = time.monotonic() - t0
    expect(status == 0 and "detached" in err, f"detach: {status} {err.strip()}")
    expect(took < 60, f"the attach and detach took {took:.1f} s")
    k = ask("K")
    expect(k == "kernel: program's handler, view: ours\n", f"after the detach: {k!r}")
    p.stdin.write("Q\n")
    p.stdin.flush()
    rest, errs = p.communicate(timeout=60)
    print("installer thread:", errs.strip())
    expect("".join(out) + rest == ref.stdout,
           f"output with attach differs:\n{''.join(out) + rest}\nwithout:\n{ref.stdout}")
    expect(p.returncode == ref.returncode == 3,
           f"exit status {p.returncode}, without attach {ref.returncode}")
    info_ok(a.callmon, data)


def summed_counts(callmon, data, *options):
    """Calls per short name, summed over the modules that define it (report's `options`)."""
    r = subprocess.run([callmon, "report", "--format=json", "-d", data, *options],
                       capture_output=True, text=True, timeout=60)
    if not expect(r.returncode == 0, f"report on {data}: {r.stderr.strip()}"):
        return {}
    c = {}
    for f in json.loads(r.stdout)["functions"]:
        c[f["short_name"]] = c.get(f["short_name"], 0) + f["calls"]
    return c


def case_sigmod(a, exe):
    plugins = []
    for name in ("opened", "late"):
        so = os.path.join(a.work, f"attach_sigplugin_{os.path.basename(a.cc)}_{a.build}_{name}.so")
        subprocess.run([a.cc, "-O2", "-g", "-fPIC", "-shared", *BUILDS[a.build], "-o", so,
                        SIGPLUGIN_SOURCE], check=True)
        plugins.append(so)
    first = [f"O {plugins[0]}", "C 3", "R 20000", "C 2"]
    second = [f"L {plugins[1]}", "C 4", "R 20000", "C 1"]
    ref = subprocess.run([exe], input="".join(l + "\n" for l in first + second + ["Q"]),
                         capture_output=True, text=True, timeout=120)
    env = dict(os.environ, TEST_CALLMON_HOOK_SIGNAL=str(int(signal.SIGUSR1)))
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         bufsize=1, env=env)
    out = [p.stdout.readline()]

    def ask(line):
        p.stdin.write(line + "\n")
        p.stdin.flush()
        answer = p.stdout.readline()
        if line[0] not in "K":
            out.append(answer)
        return answer

    expect(wait_blocked(p.pid, 0, 0), "the program blocks in read")
    data = os.path.join(a.work, f"{os.path.basename(exe)}.sigmod")
    t0 = time.monotonic()
    att = Attach(a.callmon, p.pid, data)
    expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    wrapped = "kernel: other, view: plugin's\n"
    ask(first[0])
    k = ask("K")
    expect(k == wrapped, f"a plugin dlopen'ed while attached: the kernel holds the runtime's "
                         f"wrapper for its constructor's handler, sigaction shows the "
                         f"plugin's: {k!r}")
    for line in first[1:]:
        ask(line)
    # Behind the wrappers' back, in a program that records nothing meanwhile: callmon sees
    # the module in the memory map (every 20 ms) and has the pass made.
    ask(second[0])
    for _ in range(200):
        k = ask("K")
        if k == wrapped:
            break
        time.sleep(0.05)
    expect(k == wrapped, f"a plugin loaded behind the wrappers' back in a quiet program: the "
                         f"kernel holds the runtime's wrapper for its handler: {k!r}")
    tool_writes = (a.build == "sled" and "gcc" in os.path.basename(a.cc)) or a.build == "plain"
    for _ in range(200):
        if not tool_writes or "late stop:" in open(att.log).read():
            break
        time.sleep(0.05)
    if tool_writes:
        # The late stop's answer is folded in by a pass (its `late-stop` meta line): in this
        # quiet program one callmon makes in the idle thread. Waited for before the jumps:
        # made instead by R's first chunk switch, inside a hook that the signal then
        # abandoned, it left gcc's --patch recording undecodable from there on in 2 runs of
        # 7 (the same addresses decoded wrong each time: an event-writer question of its
        # own, not this test's; docs/patching.md, "Modules loaded while attached").
        def folded():
            return any(re.search(r"^late-stop \d+ 0 \d+$", open(os.path.join(data, f)).read(), re.M)
                       for f in os.listdir(data) if f.endswith(".meta"))
        for _ in range(200):
            if folded():
                break
            time.sleep(0.05)
        expect(folded(), f"{data}: the late stop's answer folded in (a late-stop meta line) "
                         f"without the program recording anything")
    for line in second[1:]:
        ask(line)
    status, err = att.stop()
    took = time.monotonic() - t0
    expect(status == 0 and "detached" in err and "changed" not in err,
           f"detach: {status} {err.strip()}")
    expect(took < 60, f"the attach and detach took {took:.1f} s")
    if tool_writes:
        expect(re.search(r"late stop\(s\).*?(\d+) site\(s\) written, 0 left", err),
               f"a late stop wrote the late plugin's sites: {err.strip()}")
    k = ask("K")
    expect(k == "kernel: plugin's handler, view: plugin's\n", f"after the detach: {k!r}")
    for so in plugins:
        expect(code_as_in_file(p.pid, so), f"{so}'s code after the detach is its file's")
    p.stdin.write("Q\n")
    p.stdin.flush()
    rest, _ = p.communicate(timeout=60)
    expect("".join(out) + rest == ref.stdout,
           f"output with attach differs:\n{''.join(out) + rest}\nwithout:\n{ref.stdout}")
    expect(p.returncode == ref.returncode == 3,
           f"exit status {p.returncode}, without attach {ref.returncode}")
    c = summed_counts(a.callmon, data)
    want = {"plugin_run": 4, "plugin_step": 3 + 2 + 4 + 1}
    got = {name: c.get(name, 0) for name in want}
    expect(got == want, f"{data}: counts {got}, expected {want}")
    expect(c.get("plugin_sig_work", 0) >= 2 and c.get("plugin_mid", 0) >= 40000,
           f"{data}: the plugins' work recorded: {c.get('plugin_sig_work')} "
           f"{c.get('plugin_mid')}")
    # The tree's shape across the jumps: a jump back into plugin_sig_work (it holds the
    # sigsetjmp) closes only the frames deeper than it, so every plugin_deep call (and its
    # plugin_mid) stays under it, and the C requests after R are calls of main's, at the
    # level of main's calls (main's frame, open at the attach, is the recording's root: its
    # calls are at depth 1), not under plugin_sig_work or a frame left open. Before the fix a
    # handler that ran at the end of a hook's chunk switch left the hook's ENTER unwritten
    # yet counted in the jump's UNWIND (plugin_sig_work closed as [longjmp]), or its EXIT
    # unwritten and the frame open (later calls one level too deep).
    under = summed_counts(a.callmon, data, "--callee-of", "^plugin_sig_work$")
    got = {name: under.get(name, 0) for name in ("plugin_mid", "plugin_run", "plugin_step")}
    want = {"plugin_mid": c.get("plugin_mid", 0), "plugin_run": 0, "plugin_step": 0}
    expect(got == want, f"{data}: calls under plugin_sig_work {got}, expected {want}")
    top = summed_counts(a.callmon, data, "--max-depth", "2")
    got = {name: top.get(name, 0) for name in ("plugin_run", "plugin_sig_work")}
    want = {"plugin_run": 4, "plugin_sig_work": 2}
    expect(got == want, f"{data}: calls at main's level or above {got}, expected {want}")
    # A jump abandons at most one hook, which may leave one exit unmatched.
    info_ok(a.callmon, data, unmatched_ok=c.get("plugin_sig_handler", 0))


def case_sigmodstart(a, exe):
    """sigmod's jumps with the program started under `callmon record` instead of attached:
    the program is built with no flag (no frame of its own, so main's calls are the
    recording's roots), the plugin as --build says (one with hooks of its own). The tree's
    shape across the jumps, as in case_sigmod."""
    so = os.path.join(a.work, f"attach_sigplugin_{os.path.basename(a.cc)}_{a.build}_start.so")
    subprocess.run([a.cc, "-O2", "-g", "-fPIC", "-shared", *BUILDS[a.build], "-o", so,
                    SIGPLUGIN_SOURCE], check=True)
    script = "".join(l + "\n" for l in [f"O {so}", "C 3", "R 20000", "C 2", "Q"])
    ref = subprocess.run([exe], input=script, capture_output=True, text=True, timeout=120)
    data = os.path.join(a.work, f"{os.path.basename(exe)}.sigmodstart")
    shutil.rmtree(data, ignore_errors=True)
    env = dict(os.environ, TEST_CALLMON_HOOK_SIGNAL=str(int(signal.SIGUSR1)))
    rec = subprocess.run([a.callmon, "record", "-o", data, "--", exe], input=script,
                         capture_output=True, text=True, timeout=180, env=env)
    expect(rec.returncode == ref.returncode == 3 and rec.stdout == ref.stdout,
           f"under callmon: status {rec.returncode}, output {rec.stdout!r} (without: "
           f"{ref.returncode}, {ref.stdout!r}); stderr: {rec.stderr.strip()}")
    c = summed_counts(a.callmon, data)
    expect(c.get("plugin_sig_handler", 0) >= 1 and c.get("plugin_mid", 0) >= 20000,
           f"{data}: the jumps happened and the work was recorded: "
           f"{c.get('plugin_sig_handler')} {c.get('plugin_mid')}")
    under = summed_counts(a.callmon, data, "--callee-of", "^plugin_sig_work$")
    got = {name: under.get(name, 0) for name in ("plugin_mid", "plugin_run", "plugin_step")}
    want = {"plugin_mid": c.get("plugin_mid", 0), "plugin_run": 0, "plugin_step": 0}
    expect(got == want, f"{data}: calls under plugin_sig_work {got}, expected {want}")
    top = summed_counts(a.callmon, data, "--max-depth", "1")
    got = {name: top.get(name, 0) for name in ("plugin_run", "plugin_sig_work")}
    want = {"plugin_run": 2, "plugin_sig_work": 1}
    expect(got == want, f"{data}: calls at the top level {got}, expected {want}")
    r = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                       timeout=60)
    expect(r.returncode == 0 and "problems:  none" in r.stdout,
           f"info on {data}: {r.returncode} {r.stdout[-400:]} {r.stderr}")
    shutil.rmtree(data, ignore_errors=True)


def detach_while_open(a, exe, data, wanted, what, ref, ref_rest):
    """Starts `exe`, attaches once it said "ready", sends "go", expects the line `wanted`
    (`what` it means), detaches, then sends "end": the program must go on as without
    attach (`ref`, its run without; `ref_rest`, its output after those lines)."""
    p = subprocess.Popen([exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, bufsize=1)
    expect(p.stdout.readline() == "ready\n", "the fixture starts")
    att = Attach(a.callmon, p.pid, data)
    expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    p.stdin.write("go\n")
    p.stdin.flush()
    line = p.stdout.readline()
    expect(line == wanted, f"{what}: {line!r}")
    status, err = att.stop()
    expect(status == 0 and "detached" in err, f"detach: {status} {err.strip()}")
    try:
        p.stdin.write("end\n")
        p.stdin.flush()
    except BrokenPipeError:
        pass  # it died meanwhile: said below
    rest, errs = p.communicate(timeout=60)
    expect(rest == ref_rest,
           f"the program goes on as without attach:\n{rest}{errs}(without attach:\n{ref.stdout})")
    expect(p.returncode == ref.returncode == 0,
           f"exit status {p.returncode}, without attach {ref.returncode}: {errs.strip()}")


def case_sigtramp(a, exe):
    ref = subprocess.run([exe, "free"], capture_output=True, text=True, timeout=60)
    data = os.path.join(a.work, f"{os.path.basename(exe)}.sigtramp")
    detach_while_open(a, exe, data, "caught\n", "a handler interrupted the exit trampoline",
                      ref, ref.stdout.split("\n", 1)[1])
    info_ok(a.callmon, data)


def case_moved(a, exe):
    ref = subprocess.run([exe], input="go\nend\n", capture_output=True, text=True, timeout=60)
    data = os.path.join(a.work, f"{os.path.basename(exe)}.moved")
    detach_while_open(a, exe, data, "waiting\n", "moved_frame is open", ref,
                      ref.stdout.split("\n", 2)[2])
    r = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                       timeout=60)
    expect(r.returncode == 0 and "refused moved_frame" in r.stdout and
           "it moves its frame" in r.stdout,
           f"info on {data}: moved_frame refused, with its reason: {r.stdout[-600:]}")
    info_ok(a.callmon, data)


def case_throwing(a, exe):
    """Attached and detached three times while three threads throw and catch without pause:
    the program must neither terminate nor change its output (on 6f111a4 an attach that
    stopped a thread inside the unwinder redirected its frames' return addresses, and the
    unwinder, reading them, found no handler: std::terminate; and a detach that needed a
    second stop had undone the unwinder's interposers at its first, so that a throw in
    between met the redirected returns: std::terminate)."""
    s = Server(exe)
    for n in range(3):
        attached_requests(a, s, os.path.join(a.work, f"{os.path.basename(exe)}.throwing{n}"),
                          ["R"], n, hold=1.0)
    out, status = s.finish()
    want = "ready\n" + "ok\n" * 3 + "caught in every thread: yes\n"
    expect((out, status) == (want, 5), f"output {out!r}, status {status}")


def case_vfork(a, exe):
    script = ["F 50", "F 50", "E", "F 50"]
    after = ["F 5"]  # after the detach: the program's handler given back to the kernel
    ref_out, ref_status = reference(exe, script + after)
    s = Server(exe)
    data = os.path.join(a.work, f"{os.path.basename(exe)}.vfork")
    attached_requests(a, s, data, script, 1)
    for line in after:
        s.request(line)
    out, status = s.finish()
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 3, f"exit status {status}, without attach {ref_status}")
    c = counts(a.callmon, data)
    got = {name: c.get(name, 0) for name in ("parent_leaf", "child_leaf")}
    want = {"parent_leaf": len(script), "child_leaf": 0}
    expect(got == want, f"{data}: counts {got}, expected {want} (the children's calls are "
                        "not the parent's)")
    info_ok(a.callmon, data)


def case_exit(a, exe):
    env = dict(os.environ, TEST_CALLMON_HOOK_SIGNAL=str(int(signal.SIGURG)))
    p = subprocess.Popen([exe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env)
    expect(p.stdout.readline() == "ready\n", "the fixture starts")
    data = os.path.join(a.work, f"{os.path.basename(exe)}.exit")
    att = Attach(a.callmon, p.pid, data)
    expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    out, err = p.communicate(timeout=120)
    status, att_err = att.stop()
    expect(p.returncode == 3 and out == "ok\n", f"the program: status {p.returncode}, {out!r}")
    own = dict(line.split() for line in err.split("\n") if line.count(" ") == 1)
    expect(own.get("self") == "0", f"the signal came from inside a hook: {err!r}")
    expect(status == 0 and "ended during the" in att_err,
           f"record -p: {status} {att_err.strip()}")
    c = counts(a.callmon, data)
    got = {name: c.get(name, 0) for name in ("handler", "tail", "tleaf", "fleaf")}
    want = {"handler": 1, "tail": 100000, "tleaf": 200000, "fleaf": 20000}
    expect(got == want, f"{data}: counts {got}, expected {want}")
    r = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                       timeout=60)
    expect(r.returncode == 0 and "problems:  none" in r.stdout,
           f"info on {data}: {r.returncode} {r.stdout[-400:]} {r.stderr}")


def case_open(a, exe):
    ref_out, ref_status = reference(exe, ["W 2"])
    s = Server(exe)
    data = os.path.join(a.work, f"{os.path.basename(exe)}.open")
    att = Attach(a.callmon, s.pid, data)
    expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    s.send("H")
    expect(wait_blocked(s.pid, 0, s.hold_r), "a worker holds a request open (read on its fd)")
    status, err = att.stop()
    expect(status == 0, f"detach with a call open: {status} {err.strip()}")
    # The call returns after the detach (in the -pg modes through the runtime's exit
    # trampoline, which now only returns).
    os.write(s.hold_w, b"\x05")
    s.lines.append(s.p.stdout.readline())
    s.request("W 2")
    out, status = s.finish()
    want = ref_out.replace("ok 1 ", "ok 1 5\nok 2 ", 1).replace("served 1 requests, total ",
                                                                 "served 2 requests, total 5+", 1)
    ref_total = int(ref_out.rsplit(" ", 1)[1])
    want = want.replace(f"total 5+{ref_total}", f"total {5 + ref_total}")
    expect(out == want, f"output after a detach with a call open:\n{out}\nexpected:\n{want}")
    expect(status == ref_status == 3, f"exit status {status}")
    c = counts(a.callmon, data)
    expect(c.get("serve_hold", 0) == 1, f"{data}: the open call is recorded once: {c}")


def case_unwind(a, exe):
    script = ["N 0", "N 1", "N 2", "N 3"]
    ref = Server(exe)
    ref.send("B")
    ref.request("T")
    for line in script + script:
        ref.request(line)
    ref_out, ref_status = ref.finish()
    s = Server(exe)
    # First, an exception through frames open at the attach, thrown before the thread's first
    # hook (no state yet: in the -pg modes the runtime must take its frames to let the
    # unwinder see their return addresses).
    s.send("B")
    time.sleep(0.3)
    expect(blocked_in(s.pid, 0, 0), "blocked in inner_read()")
    held = os.path.join(a.work, f"{os.path.basename(exe)}.held")
    att = Attach(a.callmon, s.pid, held)
    expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    s.request("T")
    status, err = att.stop()
    expect(status == 0, f"detach: {status} {err.strip()}")
    for line in script:
        s.request(line)
    data = os.path.join(a.work, f"{os.path.basename(exe)}.unwind")
    att = Attach(a.callmon, s.pid, data)
    expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    for line in script:
        s.request(line)
    status, err = att.stop()
    expect(status == 0, f"detach: {status} {err.strip()}")
    out, status = s.finish()
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 4, f"exit status {status}, without attach {ref_status}")
    c = counts(a.callmon, data)
    want = {"middle": 4, "thrower": 4, "jump_middle": 4, "jumper": 4}
    got = {name: c.get(name, 0) for name in want}
    expect(got == want, f"{data}: counts {got}, expected {want}")
    threads, text = replay_threads(a.callmon, held)
    lines = [body for t in threads.values() for _, _, _, body in t]
    for name in ("catcher", "outer_read", "inner_read"):
        expect(f"{name}() {{ [inherited]" in lines, f"{held}: {name}() inherited:\n{text}")
    for name in ("outer_read", "inner_read"):
        expect(any(b.startswith(f"}} /* {name}() */") and "[exception]" in b for b in lines),
               f"{held}: {name}() left by the exception:\n{text}")


def case_churn(a, exe):
    s = Server(exe)
    for n in (1, 2):
        data = os.path.join(a.work, f"{os.path.basename(exe)}.churn{n}")
        att = Attach(a.callmon, s.pid, data)
        expect("attached to process" in att.first, f"attach {n}: {att.first.strip()}")
        time.sleep(0.3)
        s.request("R")
        status, err = att.stop()
        expect(status == 0, f"detach {n}: {status} {err.strip()}")
        c = counts(a.callmon, data)
        # Threads started before the attach or cut by the detach make partial counts.
        expect(0 < c.get("work", 0) <= 50 * (c.get("short_lived", 0) + 8),
               f"{data}: work recorded: {c}")
        r = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                           timeout=60)
        expect(r.returncode == 0 and "problems:  none" in r.stdout,
               f"info on {data}: {r.stdout[-300:]} {r.stderr}")
    time.sleep(0.2)
    out, status = s.finish()
    expect(out == "ready\nok\nok\nall results right\n", f"output: {out!r}")
    expect(status == 5, f"exit status {status}")


def sched_switches(data):
    """The switch records of `data`/session.sched (include/callmon/format/sched.hpp: a
    256-byte header, then 32-byte records), as (time_ns, pid, tid, kind); kinds 1 to 3 only."""
    path = os.path.join(data, "session.sched")
    if not os.path.exists(path):
        return []
    raw = open(path, "rb").read()[256:]
    out = []
    for off in range(0, len(raw) - len(raw) % 32, 32):
        time_ns, _value, pid, tid, kind, _cpu, _res = struct.unpack_from("<QQIIHHI", raw, off)
        if kind in (1, 2, 3):
            out.append((time_ns, pid, tid, kind))
    return out


def case_sched(a, exe):
    """An attach records the threads' context switches (session.sched), of the threads
    running at the attach and of those created during it; a second attach has its own."""
    s = Server(exe)
    time.sleep(0.2)
    spans = []
    for n in (1, 2):
        data = os.path.join(a.work, f"{os.path.basename(exe)}.sched{n}")
        before = {int(t) for t in os.listdir(f"/proc/{s.pid}/task")}
        att = Attach(a.callmon, s.pid, data)
        expect("attached to process" in att.first, f"attach {n}: {att.first.strip()}")
        time.sleep(0.5)
        s.request("R")  # wakes the main thread, blocked in read
        status, err = att.stop()
        expect(status == 0, f"detach {n}: {status} {err.strip()}")
        expect("scheduler time not recorded" not in err, f"attach {n}: {err.strip()}")
        r = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True,
                           timeout=60)
        line = next((l for l in r.stdout.splitlines() if l.startswith("scheduler:")), "")
        expect(line.startswith("scheduler: recorded: ") and "did not finish" not in line,
               f"{data}: info says {line!r}")
        sw = sched_switches(data)
        tids = {tid for _, _, tid, _ in sw}
        expect(sw and all(pid == s.pid for _, pid, _, _ in sw),
               f"{data}: {len(sw)} switch(es), all of process {s.pid}: "
               f"{sorted({pid for _, pid, _, _ in sw})}")
        expect(s.pid in tids, f"{data}: the main thread's switches (woken by a request): {sorted(tids)}")
        expect(tids & (before - {s.pid}), f"{data}: the spawner's switches: {sorted(tids)}, "
               f"threads at the attach {sorted(before)}")
        # The spawner's short-lived threads, created during the attach: its inherited events.
        expect(tids - before, f"{data}: switches of threads created during the attach: "
               f"{sorted(tids)}, threads at the attach {sorted(before)}")
        # A thread created while the events were being opened may have two events (its
        # creator's inherited one and its own): each switch is kept once.
        dups = len(sw) - len(set(sw))
        expect(dups == 0, f"{data}: {dups} switch record(s) twice")
        if sw:
            spans.append((min(t for t, _, _, _ in sw), max(t for t, _, _, _ in sw)))
        time.sleep(0.2)
    # Each attach its own file: the second's switches all after the first's detach.
    expect(len(spans) == 2 and spans[0][1] < spans[1][0], f"switch time spans {spans}")
    # --no-scheduler: no file, info says so.
    data = os.path.join(a.work, f"{os.path.basename(exe)}.nosched")
    att = Attach(a.callmon, s.pid, data, ["--no-scheduler"])
    time.sleep(0.2)
    s.request("R")
    status, err = att.stop()
    expect(status == 0 and not os.path.exists(os.path.join(data, "session.sched")),
           f"--no-scheduler: {status} {err.strip()}, files {os.listdir(data)}")
    out, status = s.finish()
    expect(out == "ready\nok\nok\nok\nall results right\n", f"output: {out!r}")
    expect(status == 5, f"exit status {status}")


def case_fork(a, exe):
    ref_out, ref_status = reference(exe, ["F"] * 3)
    s = Server(exe)
    data = os.path.join(a.work, f"{os.path.basename(exe)}.fork")
    att = Attach(a.callmon, s.pid, data)
    expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    s.request("F")
    s.request("F")
    status, err = att.stop()
    expect(status == 0, f"detach: {status} {err.strip()}")
    s.request("F")
    out, status = s.finish()
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 6, f"exit status {status}, without attach {ref_status}")
    c = counts(a.callmon, data)
    got = {name: c.get(name, 0) for name in ("work", "leaf")}
    expect(got == {"work": 4, "leaf": 30}, f"{data}: counts {got} (parent and two children)")
    r = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True, timeout=60)
    expect(r.returncode == 0 and "processes: 3" in r.stdout and "problems:  none" in r.stdout,
           f"info on {data}: {r.stdout[-600:]} {r.stderr}")


def replay_threads(callmon, data):
    """`callmon replay` as {tid: [(depth, name, kind, line)]}, kind "open", "call" or "close"."""
    r = subprocess.run([callmon, "replay", "--no-pager", "--color=never", "-d", data],
                       capture_output=True, text=True, timeout=60)
    expect(r.returncode == 0, f"replay on {data}: {r.stderr.strip()}")
    threads = {}
    tid = None
    for line in r.stdout.splitlines():
        if line.startswith("# thread "):
            tid = line.split()[2]
            continue
        if line.startswith("#") or " | " not in line:
            continue
        left, text = line.split(" | ", 1)
        if len(left.split()) >= 2 and left.split()[-1].isdigit():
            tid = left.split()[-1]
        body = text.lstrip(" ")
        depth = (len(text) - len(body)) // 2
        if body.startswith("}"):
            name, kind = body.split("/* ", 1)[1].split("(")[0], "close"
        else:
            name, kind = body.split("(")[0], "open" if body.rstrip().endswith("{") or "{ " in body else "call"
        threads.setdefault(tid, []).append((depth, name, kind, body))
    return threads, r.stdout


def case_inherit(a, exe, nocfi_exe):
    # gcc splits work_cold's blocking path off into work_cold.cold (clang does not split).
    for request, outer, inner in [("N", "handle", "work")] + (
            [("C", "handle_cold", "work_cold")] if "gcc" in os.path.basename(a.cc) else []):
        inherit_one(a, exe, request, outer, inner)
    inherit_idle(a, exe)
    inherit_idle_filtered(a, exe)
    # No unwind tables: nothing to unwind with, the attach works as before.
    ref_out, ref_status = inherit_drive(a, nocfi_exe, None, "N")[:2]
    data = os.path.join(a.work, f"{os.path.basename(nocfi_exe)}.inherit")
    out, status, err = inherit_drive(a, nocfi_exe, data, "N")
    expect(out == ref_out and status == ref_status == 3,
           f"without unwind tables: {status} {out} (without attach {ref_status} {ref_out})")


def inherit_idle(a, exe):
    """Attached and detached while the worker blocks in handle() -> work() -> read: a thread
    that makes no call while attached still shows its frames open at the attach."""
    s = Server(exe)
    s.send("N")
    expect(wait_blocked(s.pid, 0, s.hold_r), "a worker blocks inside handle() -> work()")
    data = os.path.join(a.work, f"{os.path.basename(exe)}.inheritidle")
    att = Attach(a.callmon, s.pid, data)
    status, err = att.stop()
    expect(status == 0 and "detached" in err, f"detach: {status} {err.strip()}")
    os.write(s.hold_w, b"\x05")
    s.lines.append(s.p.stdout.readline())
    s.finish()
    r = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True, timeout=60)
    expect(r.returncode == 0 and "problems:  none" in r.stdout, f"info on {data}: {r.stdout[-400:]}")
    threads, text = replay_threads(a.callmon, data)
    held = [t for t in threads.values() if any(n == "work" for _, n, _, _ in t)]
    if expect(len(held) == 1, f"idle: one thread shows work():\n{text}"):
        opened = [(d, n, body) for d, n, k, body in held[0] if k == "open"]
        expect([n for _, n, _ in opened] == ["worker", "handle", "work"] and
               all("[inherited]" in body for _, _, body in opened) and
               [d for d, _, _ in opened] == [opened[0][0] + i for i in range(3)] and
               all(k == "close" for _, _, k, _ in held[0][3:]),
               f"idle: worker/handle/work open, inherited, nested:\n{text}")
        # Open from the attach to the detach: well under the test's own duration.
        expect(re.search(r"\d s \[", text) is None, f"idle: durations from the attach:\n{text}")


def inherit_idle_filtered(a, exe):
    """inherit_idle with --exclude=^handle$: the idle thread's frames are written by the
    detaching thread, each by the name filter's table: worker and work shown, handle not."""
    s = Server(exe)
    s.send("N")
    expect(wait_blocked(s.pid, 0, s.hold_r), "a worker blocks inside handle() -> work()")
    data = os.path.join(a.work, f"{os.path.basename(exe)}.inheritidlefiltered")
    att = Attach(a.callmon, s.pid, data, extra=["--exclude=^handle$"])
    status, err = att.stop()
    expect(status == 0 and "detached" in err, f"detach: {status} {err.strip()}")
    os.write(s.hold_w, b"\x05")
    s.lines.append(s.p.stdout.readline())
    s.finish()
    threads, text = replay_threads(a.callmon, data)
    held = [t for t in threads.values() if any(n == "work" for _, n, _, _ in t)]
    if expect(len(held) == 1, f"idle, filtered: one thread shows work():\n{text}"):
        opened = [(d, n, body) for d, n, k, body in held[0] if k == "open"]
        expect([n for _, n, _ in opened] == ["worker", "work"] and
               all("[inherited]" in body for _, _, body in opened),
               f"idle, filtered: worker/work open and inherited, handle left out:\n{text}")


def inherit_drive(a, exe, data, request):
    s = Server(exe)
    s.send(request)
    expect(wait_blocked(s.pid, 0, s.hold_r), "a worker blocks inside handle() -> work()")
    att = Attach(a.callmon, s.pid, data) if data else None
    if att:
        expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    os.write(s.hold_w, b"\x05")
    s.lines.append(s.p.stdout.readline())
    s.request("W 2")
    err = ""
    if att:
        status, err = att.stop()
        expect(status == 0 and "detached" in err, f"detach: {status} {err.strip()}")
    out, status = s.finish()
    return out, status, err


def inherit_one(a, exe, request, handle, work):
    """Attached while a worker blocks in handle() -> work() -> read (named `handle`, `work`)."""
    ref_out, ref_status = inherit_drive(a, exe, None, request)[:2]
    data = os.path.join(a.work, f"{os.path.basename(exe)}.inherit{request}")
    out, status, err = inherit_drive(a, exe, data, request)
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 3, f"exit status {status}, without attach {ref_status}")
    expect("open at the attach recorded as inherited" in err, f"attach says what it found: {err}")
    c = counts(a.callmon, data)
    # handle() and work() began before the attach: no calls of theirs are counted.
    want = {handle: 0, work: 0, "serve": 1, "step": 3, "leaf": 4}
    got = {name: c.get(name, 0) for name in want}
    expect(got == want, f"{data}: counts {got}, expected {want}")
    r = subprocess.run([a.callmon, "info", "-d", data], capture_output=True, text=True, timeout=60)
    expect(r.returncode == 0 and "problems:  none" in r.stdout, f"info on {data}: {r.stdout[-400:]}")
    threads, text = replay_threads(a.callmon, data)
    held = [t for t in threads.values() if any(n == work for _, n, _, _ in t)]
    if expect(len(held) == 1, f"one thread shows work():\n{text}"):
        t = held[0]
        names = [(d, n, k) for d, n, k, _ in t]
        first = {n: i for i, (_, n, _) in reversed(list(enumerate(names)))}
        h, w = first.get(handle), first.get(work)
        ok = h is not None and w is not None and w == h + 1
        if expect(ok, f"handle() then work() open first on its thread:\n{text}"):
            dh = names[h][0]
            expect("[inherited]" in t[h][3] and "[inherited]" in t[w][3],
                   f"handle() and work() shown as inherited:\n{text}")
            expect(names[w] == (dh + 1, work, "open"), f"{work}() under {handle}():\n{text}")
            # After the attach: leaf() under work(), work() ends, step() under handle().
            expect(names[w + 1:w + 5] == [(dh + 2, "leaf", "call"), (dh + 1, work, "close"),
                                          (dh + 1, "step", "open"), (dh + 2, "leaf", "call")],
                   f"the calls made under the inherited frames nest under them:\n{text}")
            close = [i for i, (d, n, k) in enumerate(names) if n == handle and k == "close"]
            expect(close and names[close[0]][0] == dh, f"handle() ends when it returns:\n{text}")
            expect(names[h - 1][1] == "worker" if h else False,
                   f"worker() (open since the thread began) is inherited too:\n{text}")


def build_plugin(cc, work, kind):
    so = os.path.join(work, f"attach_plugin_{os.path.basename(cc)}_{kind}.so")
    subprocess.run([cc, "-O2", "-g", "-fPIC", "-shared", *BUILDS[kind], "-o", so, PLUGIN_SOURCE],
                   check=True)
    return so


def code_as_in_file(pid, path):
    """Whether every executable mapping of `path` in process `pid` holds its file's bytes."""
    data = open(path, "rb").read()
    maps = [l.split() for l in open(f"/proc/{pid}/maps") if l.rstrip().endswith(path)]
    checked = 0
    with open(f"/proc/{pid}/mem", "rb") as mem:
        for m in maps:
            if "x" not in m[1]:
                continue
            lo, hi = (int(x, 16) for x in m[0].split("-"))
            off = int(m[2], 16)
            n = min(hi - lo, len(data) - off)
            mem.seek(lo)
            if mem.read(n) != data[off:off + n]:
                return False
            checked += 1
    return checked > 0


def case_dlopen(a, exe):
    plugin = build_plugin(a.cc, a.work, a.build)
    os.environ["ATTACH_PLUGIN"] = plugin
    before, first, between, second = (["W 2"], ["P 3", "P 2", "D", "P 4", "D"], ["P 2"],
                                      ["P 5", "D", "P 1"])
    after = ["P 2", "D", "W 1"]
    ref_out, ref_status = reference(exe, before + first + between + second + after)
    s = Server(exe)
    for line in before:
        s.request(line)
    expect(wait_blocked(s.pid, 0, 0), "the server's main thread blocks in read")
    runs = []
    for n, script in ((1, first), (2, second)):
        data = os.path.join(a.work, f"{os.path.basename(exe)}.dl{n}")
        err = attached_requests(a, s, data, script, n)
        expect("were left" not in err and "changed between" not in err,
               f"detach {n} left patches alone: {err.strip()}")
        runs.append((data, [int(l.split()[1]) for l in script if l.startswith("P")]))
        for line in between if n == 1 else []:
            s.request(line)
    # Loaded while attached, still loaded: its code is back as it was.
    expect(code_as_in_file(s.pid, plugin), "the plugin's code after the detach is its file's")
    for line in after:
        s.request(line)
    out, status = s.finish()
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 3, f"exit status {status}, without attach {ref_status}")
    for data, ks in runs:
        c = counts(a.callmon, data)
        want = {"plugin_run": len(ks), "plugin_step": sum(ks), "plugin_leaf": sum(ks)}
        if "--no-libcall" not in ATTACH_ARGS:
            want["strlen"] = len(ks)
        got = {name: c.get(name, 0) for name in want}
        expect(got == want, f"{data}: counts {got}, expected {want}")
        info_ok(a.callmon, data)
    # The dl* calls themselves are no library calls, attached or started under `callmon
    # record` alike (docs/patching.md, "Calls that are not redirected": they read their
    # return address): the same script recorded from the start counts the plugin's calls as
    # the attach did, and no dlopen, dlsym or dlclose either.
    startup = os.path.join(a.work, f"{os.path.basename(exe)}.startup")
    s = Server(exe, prefix=[a.callmon, "record", "-o", startup, *ATTACH_ARGS, "--"])
    for line in second:
        s.request(line)
    s.finish()
    c0 = counts(a.callmon, startup)
    c2 = counts(a.callmon, runs[1][0])
    ks = runs[1][1]
    want = {"plugin_run": len(ks), "plugin_step": sum(ks), "plugin_leaf": sum(ks),
            "dlopen": 0, "dlmopen": 0, "dlsym": 0, "dlclose": 0}
    for name, c in (("started under callmon record", c0), ("attached", c2)):
        got = {n: c.get(n, 0) for n in want}
        expect(got == want, f"{name}: counts {got}, expected {want}")


def case_late(a, exe):
    """A module loaded behind the redirected GOT words (a dlopen pointer taken at the start)
    while attached: patched once callmon sees it in the memory map (docs/patching.md,
    "Modules loaded while attached"), its calls then counted exactly; undone at the detach."""
    plugin = build_plugin(a.cc, a.work, a.build)
    os.environ["ATTACH_PLUGIN"] = plugin
    script = ["L", "W 100000", "R 3", "R 2"]
    s = Server(exe)
    s.request("W 2")
    expect(wait_blocked(s.pid, 0, 0), "the server's main thread blocks in read")
    data = os.path.join(a.work, f"{os.path.basename(exe)}.late")
    att = Attach(a.callmon, s.pid, data)
    expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    tool_writes = (a.build == "sled" and "gcc" in os.path.basename(a.cc)) or a.build == "plain"
    s.request("L")
    time.sleep(0.3)  # callmon looks at the memory map every 20 ms
    # A chunk switch pokes the pass, which runs at that thread's next hook; where the tool
    # writes (gcc's 1-byte-nop sleds, --patch entries) it then stops the threads (it looks
    # for posted sites every 20 ms). The thread that took the poke may be idle until it
    # serves again: more work until callmon says it stopped them.
    works = 0
    for _ in range(30):
        s.request(script[1])
        works += 1
        time.sleep(0.1)
        if not tool_writes or "late stop:" in open(att.log).read():
            break
    for line in script[2:]:
        s.request(line)
    status, err = att.stop()
    expect(status == 0 and "detached" in err and "changed" not in err,
           f"detach: {status} {err.strip()}")
    if tool_writes:
        m = re.search(r"(\d+) late stop\(s\).*?(\d+) site\(s\) written, (\d+) left", err)
        expect(m and int(m.group(1)) >= 1 and int(m.group(2)) >= 3 and m.group(3) == "0",
               f"a late stop wrote the plugin's sites: {err.strip()}")
        meta = "".join(open(os.path.join(data, f)).read() for f in os.listdir(data)
                       if f.endswith(".meta"))
        expect(re.search(r"^late-stop [1-9]\d* 0 \d+$", meta, re.M),
               f"{data}: a late-stop meta line: {meta[-600:]}")
        if a.build == "plain":
            for fn in ("plugin_run", "plugin_step", "plugin_leaf"):
                expect(re.search(rf"^patch-fn [0-9a-f]+ {fn}$", meta, re.M),
                       f"{data}: patch-fn {fn} in the meta file")
    expect(code_as_in_file(s.pid, plugin), "the plugin's code after the detach is its file's")
    s.request("R 1")
    out, status = s.finish()
    ref_out, ref_status = reference(exe, ["W 2", script[0]] + [script[1]] * works + script[2:]
                                    + ["R 1"])
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 3, f"exit status {status}, without attach {ref_status}")
    c = counts(a.callmon, data)
    want = {"plugin_run": 2, "plugin_step": 5, "plugin_leaf": 5, "serve": works,
            "strlen": 2 + works}
    got = {name: c.get(name, 0) for name in want}
    expect(got == want, f"{data}: counts {got}, expected {want}")
    info_ok(a.callmon, data)


def case_dlchurn(a, exe):
    """A thread dlopen's, calls and dlclose's the plugin in a loop while callmon attaches and
    detaches again and again: no detach finds its patches changed (a dlclose under way when
    the detach reads the list is waited for)."""
    plugin = build_plugin(a.cc, a.work, a.build)
    os.environ["ATTACH_PLUGIN"] = plugin
    ref_out, ref_status = reference(exe, ["X", "W 3", "Y"])
    s = Server(exe)
    s.request("X")
    for n in range(1, 7):
        data = os.path.join(a.work, f"{os.path.basename(exe)}.churn{n}")
        att = Attach(a.callmon, s.pid, data)
        expect("attached to process" in att.first, f"attach {n}: {att.first.strip()}")
        if n == 1:
            s.request("W 3")
        time.sleep(0.1)
        status, err = att.stop()
        expect(status == 0 and "detached" in err, f"detach {n}: {status} {err.strip()}")
        # The attach may leave alone the sites of a plugin dlclose'd between its listing and
        # its stop (the wrappers are not in place yet): it says so. The detach must not.
        detach = [l for l in err.splitlines() if "detached from" in l]
        expect(len(detach) == 1 and "changed" not in detach[0],
               f"detach {n} found patches changed: {err.strip()}")
    s.request("Y")
    out, status = s.finish()
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 3, f"exit status {status}, without attach {ref_status}")


def case_latechurn(a, exe):
    """A thread loads, calls and closes the plugin through pointers taken at the start, in a
    loop, while attached: the late passes and stops meet instances closed under them (the
    runtime keeps a module with posted sites mapped until the tool has answered)."""
    plugin = build_plugin(a.cc, a.work, a.build)
    os.environ["ATTACH_PLUGIN"] = plugin
    work = ["W 100000"] * 6
    ref_out, ref_status = reference(exe, ["Z"] + work + ["Y"])
    s = Server(exe)
    data = os.path.join(a.work, f"{os.path.basename(exe)}.latechurn")
    att = Attach(a.callmon, s.pid, data)
    expect("attached to process" in att.first, f"attach: {att.first.strip()}")
    s.request("Z")
    for line in work:
        s.request(line)
        time.sleep(0.15)
    # The churn ends before the detach: a dlclose behind callmon's back while the detach reads
    # the list is not waited for (nothing counts it), and is not what this case tests.
    s.request("Y")
    status, err = att.stop()
    expect(status == 0 and "detached" in err, f"detach: {status} {err.strip()}")
    detach = [l for l in err.splitlines() if "detached from" in l]
    expect(len(detach) == 1 and "changed" not in detach[0], f"detach found patches changed: {err}")
    expect("late stop failed" not in err, f"no late stop failed: {err.strip()}")
    out, status = s.finish()
    expect(out == ref_out, f"output with attach differs:\n{out}\nwithout:\n{ref_out}")
    expect(status == ref_status == 3, f"exit status {status}, without attach {ref_status}")
    info_ok(a.callmon, data)
    print(err)


def one_line_error(p, what, needle):
    lines = p.stderr.strip().splitlines()
    expect(p.returncode != 0 and len(lines) == 1 and needle in p.stderr,
           f"{what}: status {p.returncode}, stderr {p.stderr!r} (expected one line with {needle!r})")


LEADERLESS = r"""
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void* worker(void* a) { (void)a; sleep(30); return 0; }
int main(void) {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  puts("main gone");
  fflush(stdout);
  pthread_exit(0);
}
"""


def kernel_thread(pid):
    """Whether /proc/PID is a kernel thread: a task without an address space."""
    try:
        text = open(f"/proc/{pid}/status").read()
    except OSError:
        return False
    return "\nState:" in text and "\nVmSize:" not in text and "\nKthread:\t0" not in text


SANDBOXED_SLEEPER = r"""
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fallocate, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog p = {sizeof f / sizeof f[0], f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p))
    return 1;
  puts("confined");
  fflush(stdout);
  sleep(30);
  return 0;
}
"""


def case_errors(a):
    record = [a.callmon, "record", "-o", os.path.join(a.work, "err.data"), "-p"]
    p = subprocess.run(record + ["4194000"], capture_output=True, text=True, timeout=30)
    one_line_error(p, "missing pid", "no process with id 4194000")
    # The options as `record -- PROG` checks them, before anything is attached.
    for args, needle in ((["--patch=("], "--patch '('"), (["--patch-module=x"], "needs --patch"),
                         (["--include=("], "nothing was attached"),
                         (["-A", "leaf@arg9/zz"], "nothing was attached")):
        p = subprocess.run(record + ["4194000", *args], capture_output=True, text=True, timeout=30)
        one_line_error(p, f"-p with {args}", needle)
    # callmon itself: the shell's pid becomes callmon's through exec.
    p = subprocess.run(["sh", "-c", 'exec "$0" record -o "$1" -p $$', a.callmon,
                        os.path.join(a.work, "self.data")], capture_output=True, text=True,
                       timeout=30)
    one_line_error(p, "itself", "is callmon itself")
    # A static program: no C library to call dlopen in.
    static = os.path.join(a.work, "static_sleeper")
    subprocess.run([a.cc, "-O2", "-static", "-x", "c", "-o", static, "-"], check=True,
                   input="#include <unistd.h>\nint main(void){sleep(30);return 0;}\n", text=True)
    t = subprocess.Popen([static])
    try:
        time.sleep(0.1)
        p = subprocess.run(record + [str(t.pid)], capture_output=True, text=True, timeout=30)
        one_line_error(p, "static program", "no C library")
    finally:
        t.kill()
        t.wait()
    # A process under a seccomp filter of its own: refused before anything is done to it
    # (the runtime's first file would meet the filter: this one kills on fallocate, and the
    # attach used to kill the program), and it goes on.
    sandboxed = os.path.join(a.work, "sandboxed_sleeper")
    subprocess.run([a.cc, "-O2", "-x", "c", "-o", sandboxed, "-"], check=True, text=True,
                   input=SANDBOXED_SLEEPER)
    t = subprocess.Popen([sandboxed], stdout=subprocess.PIPE, text=True)
    try:
        expect(t.stdout.readline() == "confined\n", "the sandboxed sleeper did not start")
        p = subprocess.run(record + [str(t.pid), "--duration", "2"], capture_output=True,
                           text=True, timeout=30)
        one_line_error(p, "seccomp filter", "runs under a seccomp filter")
        expect(t.poll() is None, f"the sandboxed program ended: status {t.returncode}")
    finally:
        t.kill()
        t.wait()
    # A kernel thread: said so, not "not permitted".
    kthread = next((int(d) for d in sorted(os.listdir("/proc"), key=lambda x: (len(x), x))
                    if d.isdigit() and kernel_thread(int(d))), None)
    if kthread:
        p = subprocess.run(record + [str(kthread)], capture_output=True, text=True, timeout=30)
        one_line_error(p, f"kernel thread {kthread}", "is a kernel thread")
    # A process whose main thread has exited (pthread_exit) while another runs: ptrace cannot
    # take the zombie leader; the error says so and names a thread id that works.
    leaderless = os.path.join(a.work, "leaderless")
    subprocess.run([a.cc, "-O2", "-pthread", "-x", "c", "-o", leaderless, "-"], check=True,
                   text=True, input=LEADERLESS)
    t = subprocess.Popen([leaderless], stdout=subprocess.PIPE, text=True)
    try:
        expect(t.stdout.readline() == "main gone\n", "the leaderless program did not start")
        time.sleep(0.1)
        p = subprocess.run(record + [str(t.pid)], capture_output=True, text=True, timeout=30)
        one_line_error(p, "exited main thread", "main thread of process")
        expect("-p " in p.stderr, f"no thread id to give instead: {p.stderr!r}")
    finally:
        t.kill()
        t.wait()
    # A stopped process: attached, recorded, left stopped, and said so.
    t = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.3)  # past the loader (libc mapped)
        os.kill(t.pid, signal.SIGSTOP)
        time.sleep(0.1)
        p = subprocess.run([a.callmon, "record", "-o", os.path.join(a.work, "stopped.data"),
                            "-p", str(t.pid), "--duration", "0.2"],
                           capture_output=True, text=True, timeout=30)
        expect(p.returncode == 0 and "is stopped" in p.stderr,
               f"stopped process: status {p.returncode}, {p.stderr!r}")
    finally:
        t.kill()
        t.wait()
    exe = build(a.cc, a.work, "sled")
    # Started under `callmon record`: already recorded.
    s = Server(exe, prefix=[a.callmon, "record", "-o", os.path.join(a.work, "under.data"),
                            "--"])
    s.request("W 1")
    # s.pid is callmon's; the program is its child.
    kids = open(f"/proc/{s.pid}/task/{s.pid}/children").read().split()
    if expect(len(kids) == 1, f"callmon record's child: {kids}"):
        p = subprocess.run(record + [kids[0]], capture_output=True, text=True, timeout=30)
        one_line_error(p, "under callmon record", "already being recorded")
    s.finish()
    # A second attach while one records.
    s = Server(exe)
    att = Attach(a.callmon, s.pid, os.path.join(a.work, "first.data"))
    p = subprocess.run([a.callmon, "record", "-o", os.path.join(a.work, "second.data"), "-p",
                        str(s.pid)], capture_output=True, text=True, timeout=30)
    one_line_error(p, "second attach", "already being recorded")
    status, err = att.stop()
    expect(status == 0, f"first attach detaches: {err}")
    s.request("W 1")
    _, status = s.finish()
    expect(status == 3, f"status after the refused attach: {status}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--callmon", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--build", choices=sorted(BUILDS))
    ap.add_argument("--case", choices=["counts", "throwing", "open", "unwind", "churn", "fork", "errors",
                                       "inherit", "filters", "parked", "dlopen", "sigparked",
                                       "late", "dlchurn", "sigsled", "latechurn", "ucontext",
                                       "sigjmp", "vfork", "exit", "sigwin", "sigtramp", "moved", "sigmod",
                                       "sched", "sigmodstart"],
                    required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--attach-arg", action="append", default=[])
    a = ap.parse_args()
    ATTACH_ARGS.extend(a.attach_arg)
    if not os.path.exists(a.cc):
        print(f"skipped: no compiler {a.cc}")
        return 77
    os.makedirs(a.work, exist_ok=True)
    try:
        status = open("/proc/sys/kernel/yama/ptrace_scope").read().strip()
        if status != "0" and os.geteuid() != 0:
            print(f"skipped: kernel.yama.ptrace_scope is {status}")
            return 77
    except OSError:
        pass
    if a.case == "errors":
        case_errors(a)
    elif a.case == "fork":
        case_fork(a, build(a.cc, a.work, a.build, FORK_SOURCE))
    elif a.case == "churn":
        case_churn(a, build(a.cc, a.work, a.build, CHURN_SOURCE))
    elif a.case == "sched":
        paranoid = open("/proc/sys/kernel/perf_event_paranoid").read().strip()
        if int(paranoid) > 2 and os.geteuid() != 0:
            print(f"skipped: kernel.perf_event_paranoid is {paranoid}")
            return 77
        case_sched(a, build(a.cc, a.work, a.build, CHURN_SOURCE))
    elif a.case == "inherit":
        nocfi = build(a.cc, a.work, a.build, extra=["-g0", "-fno-asynchronous-unwind-tables",
                                                    "-fno-unwind-tables"])
        case_inherit(a, build(a.cc, a.work, a.build), nocfi)
    elif a.case == "parked":
        case_parked(a, build(a.cc, a.work, "plain", PARKED_SOURCE))
    elif a.case == "sigparked":
        case_sigparked(a, build(a.cc, a.work, "plain", PARKED_SOURCE))
    elif a.case == "sigsled":
        case_sigsled(a, build(a.cc, a.work, "xray", SIGSLED_SOURCE))
    elif a.case == "exit":
        case_exit(a, build(a.cc, a.work, a.build, EXIT_SOURCE))
    elif a.case == "throwing":
        case_throwing(a, build(a.cc, a.work, a.build, THROWING_SOURCE))
    elif a.case == "vfork":
        case_vfork(a, build(a.cc, a.work, a.build, VFORK_SOURCE))
    elif a.case == "sigwin":
        case_sigwin(a, build(a.cc, a.work, a.build, SIGWIN_SOURCE))
    elif a.case == "sigmod":
        case_sigmod(a, build(a.cc, a.work, a.build, SIGMOD_SOURCE))
    elif a.case == "sigmodstart":
        case_sigmodstart(a, build(a.cc, a.work, "plain", SIGMOD_SOURCE))
    elif a.case == "sigtramp":
        case_sigtramp(a, build(a.cc, a.work, a.build, SIGTRAMP_SOURCE))
    elif a.case == "moved":
        case_moved(a, build(a.cc, a.work, "plain", MOVED_SOURCE))
    elif a.case == "sigjmp":
        case_sigjmp(a, build(a.cc, a.work, a.build, SIGJMP_SOURCE))
    elif a.case == "ucontext":
        case_ucontext(a, build(a.cc, a.work, a.build, UCONTEXT_SOURCE))
    elif a.case == "unwind":
        case_unwind(a, build(a.cc, a.work, a.build, THROW_SOURCE))
    else:
        exe = build(a.cc, a.work, a.build)
        {"counts": case_counts, "open": case_open, "filters": case_filters,
         "dlopen": case_dlopen, "late": case_late, "dlchurn": case_dlchurn,
         "latechurn": case_latechurn}[a.case](a, exe)
    print("FAILED" if FAILURES else "passed", len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
