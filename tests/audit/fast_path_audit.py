#!/usr/bin/env python3
"""The probes' fast paths keep away from the vector registers (docs/patching.md, "Vector
registers"; runtime/arch/x86_64/xstate.inc): the -pg, --patch, library-call and XRay
trampolines no longer save the AVX/AVX-512 state, so the code behind them must reach
anything that may touch it (libc, the dynamic linker, a call through a pointer) only
through callmon_slow_call, which saves it.

Disassembles the built libcallmon.so with objdump and walks, from the trampolines and
the hooks they call, every function reached by a direct call or jump (inlined code is part
of its caller; `.cold` parts and out-of-line helpers are followed). Fails on
  - a call or jump to anything outside the library's own text (a PLT entry: memcpy,
    clock_gettime, ...), or through a register or memory (but a trampoline's own exits:
    its jump to the function, to the real return address, to glibc's mcount);
  - a call of the runtime's private copies of libc's memcpy, memset, strlen...
    (callmon_private_*, libc_private.cpp): vector-safe today, but they stand for libc,
    and a fast path has no business copying or scanning memory of unknown length;
  - a VEX or EVEX instruction (AVX, AVX-512, opmask: it would change the state itself).
callmon_slow_call and callmon_slow_call_hot are where the walk stops.

Usage: fast_path_audit.py LIBCALLMON_SO [--objdump PATH]
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from checks import check, summary  # noqa: E402

# The trampolines (entry points the program's code reaches) and how many indirect jumps
# each may have: its exits, not calls into anything.
TRAMPOLINES = {
    "__fentry__": 1,               # forward to glibc's when nothing is recorded
    "mcount": 1,
    "callmon_pg_return": 1,        # to the real return address
    "callmon_patched_entry": 0,
    "callmon_patched_return": 1,
    "callmon_libcall_entry": 1,    # to the library function
    "callmon_xray_entry": 0,       # XRay sleds (xray_trampolines.S)
    "callmon_xray_exit": 0,
    "callmon_xray_tail": 0,
}
# The hooks they call: the roots of the C++ fast paths.
HOOKS = ["callmon_pg_enter", "callmon_pg_enter_fentry", "callmon_pg_exit",
         "callmon_patched_enter", "callmon_libcall_enter",
         "callmon_xray_enter_body", "callmon_xray_exit_body", "callmon_xray_tail_body"]
GUARDS = ("callmon_slow_call", "callmon_slow_call_hot")

HEADER = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
INSN = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+)\t(.*)$")
TARGET = re.compile(r"^([0-9a-f]+) <([^>+]+)(\+0x[0-9a-f]+)?>")
LEGACY_PREFIXES = {0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65}


def disassemble(objdump, lib):
    """{function: [(address, bytes, mnemonic, operands)]} of the library's .text."""
    out = subprocess.run([objdump, "-d", "-w", "-j", ".text", lib], check=True,
                         capture_output=True, text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = HEADER.match(line)
        if m:
            cur = funcs.setdefault(m.group(2), [])
            continue
        m = INSN.match(line)
        if m and cur is not None:
            raw = bytes.fromhex(m.group(2).replace(" ", ""))
            text = m.group(3).strip()
            mnem, _, ops = text.partition(" ")
            if mnem in ("notrack", "bnd", "rex.W", "lock", "rep", "repz", "repnz", "ds", "cs"):
                more, _, ops = ops.strip().partition(" ")
                mnem = mnem + " " + more
            cur.append((int(m.group(1), 16), raw, mnem, ops.strip()))
    return funcs


def is_vex(raw, mnem):
    """A VEX (c4/c5) or EVEX (62) encoded instruction: AVX, AVX-512, opmask."""
    i = 0
    while i < len(raw) and raw[i] in LEGACY_PREFIXES:
        i += 1
    first = raw[i] if i < len(raw) else 0
    name = mnem.split()[-1]
    return first in (0xc4, 0xc5, 0x62) or name.startswith(("v", "k"))


def audit(funcs, name, indirect_allowed, problems, queue):
    """Checks one function; queues the functions it reaches directly."""
    indirect = 0
    for addr, raw, mnem, ops in funcs[name]:
        where = f"{name}+{addr:x}: {mnem} {ops}"
        if is_vex(raw, mnem):
            problems.append("vector instruction " + where)
        base = mnem.split()[-1]
        if not (base.startswith("call") or base.startswith("j")):
            continue
        if ops.startswith("*"):
            indirect += 1
            if indirect > indirect_allowed:
                problems.append("indirect " + where)
            continue
        m = TARGET.match(ops)
        if not m:
            problems.append("unknown target " + where)
            continue
        target = m.group(2)
        if target == name:
            continue
        if target in GUARDS:
            continue
        if target.startswith("callmon_private_"):
            problems.append("libc function (the runtime's private copy) " + where)
            continue
        if "@plt" in target or target not in funcs:
            problems.append("call out of the library's text " + where)
            continue
        queue.append(target)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--objdump", default="objdump")
    args = ap.parse_args()
    funcs = disassemble(args.objdump, args.lib)
    check("the guarded wrappers are in the library", all(g in funcs for g in GUARDS))
    problems, seen = [], set()
    for t, n in TRAMPOLINES.items():
        if check(f"trampoline {t} found", t in funcs):
            queue = []
            audit(funcs, t, n, problems, queue)
            check(f"{t} calls only the hooks", set(queue) <= set(HOOKS) | {t}, sorted(set(queue)))
            seen.add(t)
    queue = [h for h in HOOKS if check(f"hook {h} found", h in funcs)]
    while queue:
        f = queue.pop()
        if f in seen:
            continue
        seen.add(f)
        audit(funcs, f, 0, problems, queue)
    print("audited: " + ", ".join(sorted(seen)))
    check("the fast paths call nothing but callmon_slow_call(_hot) and use no AVX",
          not problems, "\n".join(problems))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
