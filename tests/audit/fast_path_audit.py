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

Then the hot slow paths: callmon_slow_call_hot keeps only the upper halves of ymm/zmm0-15,
so what it calls must leave zmm16-31 and the opmask registers alone (xstate.inc). Every
function whose address the walked code takes (`lea fn(%rip)`: the function handed to a
slow_call) is such a root, but those listed in FULL_SAVE, which go to callmon_slow_call only
(checked: the first guard called after the `lea` in the code's order), and the kFull
instances of the slow paths (Reach, hooks.hpp). From the roots every function reached is
walked (the runtime's private memcpy and memset too: their instructions are checked) and
the walk fails on
  - a call or jump out of the library's text (libc, the dynamic linker: glibc's EVEX
    string functions use ymm16-31 and k0-7) or through a register or memory (the program's
    code: a monitor's callbacks), but callmon_monotonic_ns's one call into the vDSO;
  - a VEX or EVEX instruction, and any instruction naming zmm16-31, ymm16-31, xmm16-31
    or an opmask register;
  - a function whose address it takes that is not walked too, listed nowhere.

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

# Functions only ever handed to callmon_slow_call (every vector component saved): the rare
# slow paths the fast and hot slow paths reach (chunks, bursts, warnings, rescans, a
# thread's set-up). Demangled names up to the parameter list.
FULL_SAVE = {
    "callmon::rt::write_enter_slow", "callmon::rt::write_exit_slow",
    "callmon::rt::write_word_interrupted", "callmon::rt::write_hook_pause",
    "callmon::rt::switch_chunk", "callmon::rt::modules_rescan",
    "callmon::rt::enter_slow", "callmon::rt::exit_slow",
    "callmon::rt::args_unseen", "callmon_cyg_exit_pause",
    "(anonymous namespace)::libcall_thread_setup",
}
# The kFull instances of the slow paths (template <Reach>, hooks.hpp): Reach::kFull is 0.
FULL_INSTANCE = re.compile(r"ILN7callmon2rt5ReachE0E")
# Functions allowed indirect calls on the hot slow paths, and how many.
HOT_INDIRECT = {"callmon_monotonic_ns": 1}   # into the kernel's vDSO (vdso_clock.cpp)
# Registers of AVX-512 that slow_call_hot does not keep.
HI16_OR_K = re.compile(r"%(?:[xyz]mm(?:1[6-9]|2[0-9]|3[01])|k[0-7])\b")
LEA_FN = re.compile(r"^lea[lq]?$")

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


def demangle(names):
    """{mangled: demangled without the parameter list}."""
    names = sorted(names)
    try:
        out = subprocess.run(["c++filt", "-p"], input="\n".join(names), capture_output=True,
                             text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        out = names
    return dict(zip(names, out))


def address_taken(funcs, name):
    """[(function whose address `name` loads into rdi with a RIP-relative lea - the first
    argument of a slow_call, the function it calls - and the first guard called after it in
    the code's order, or None)]."""
    found, code = [], funcs[name]
    for i, (_, _, mnem, ops) in enumerate(code):
        if not LEA_FN.match(mnem.split()[-1]) or "<" not in ops or not ops.split("#")[0].strip().endswith(",%rdi"):
            continue
        target = ops.split("<", 1)[1].rstrip(">")
        if "+" in target or target not in funcs:
            continue  # data, or inside a function: not a function handed over
        guard = None
        for _, _, m2, o2 in code[i + 1:]:
            t = TARGET.match(o2)
            if m2.split()[-1].startswith(("call", "jmp")) and t and t.group(2) in GUARDS:
                guard = t.group(2)
                break
        found.append((target, guard))
    return found


def audit_hot(funcs, name, problems, queue, taken):
    """Checks one function reached from a hot slow path; queues what it reaches."""
    indirect = 0
    for addr, raw, mnem, ops in funcs[name]:
        where = f"{name}+{addr:x}: {mnem} {ops}"
        if is_vex(raw, mnem) or HI16_OR_K.search(ops):
            problems.append("vector state slow_call_hot does not keep: " + where)
        base = mnem.split()[-1]
        if not (base.startswith("call") or base.startswith("j")):
            continue
        if ops.startswith("*"):
            indirect += 1
            if indirect > HOT_INDIRECT.get(name, 0):
                problems.append("indirect (code outside the library) " + where)
            continue
        m = TARGET.match(ops)
        if not m:
            problems.append("unknown target " + where)
            continue
        target = m.group(2)
        if target == name or target in GUARDS:
            continue
        if "@plt" in target or target not in funcs:
            problems.append("call out of the library's text " + where)
            continue
        queue.append((target, name))
    taken.extend((t, g, name) for t, g in address_taken(funcs, name))


def audit_hot_paths(funcs, fast):
    """Walks the hot slow paths from the functions the walked code `fast` hands over."""
    problems, seen, taken, parent = [], set(), [], {}
    for f in fast:
        taken.extend((t, g, f) for t, g in address_taken(funcs, f))
    names = demangle(funcs.keys())
    queue, roots = [], set()

    def chain(f):
        """How the walk reached `f`: the hot slow path first."""
        path = [names[f]]
        while f in parent and parent[f] not in roots | {f}:
            f = parent[f]
            path.append(names[f])
        if f in parent:
            path.append(names[parent[f]])
        return " <- ".join(path)

    while True:
        while taken:
            target, guard, by = taken.pop()
            full = names[target] in FULL_SAVE or FULL_INSTANCE.search(target)
            if full and guard == "callmon_slow_call_hot":
                problems.append(f"{names[target]} is listed as reached through callmon_slow_call "
                                "only, but goes to callmon_slow_call_hot")
            if not full:
                roots.add(target)
                queue.append((target, by))
        if not queue:
            break
        f, by = queue.pop()
        if f in seen:
            continue
        seen.add(f)
        if f not in roots:
            parent[f] = by
        before = len(problems)
        audit_hot(funcs, f, problems, queue, taken)
        for i in range(before, len(problems)):
            problems[i] += "\n       in " + chain(f)
    return problems, seen, roots, names


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
    hot_problems, hot_seen, roots, names = audit_hot_paths(funcs, seen)
    print("hot slow paths: " + ", ".join(sorted(names[r] for r in roots)))
    print(f"  {len(hot_seen)} functions reached")
    check("hot slow paths found (pg_enter_slow's, the monotonic clock's)",
          any("pg_enter_slow" in names[r] for r in roots) and
          any("monotonic" in names[r] for r in roots), sorted(names[r] for r in roots))
    check("the hot slow paths reach nothing outside the library and keep zmm16-31 and k0-7",
          not hot_problems, "\n".join(hot_problems))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
