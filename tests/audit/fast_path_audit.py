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

One exception, a monitor's callbacks (the program's code), and only on the slow paths of
the probes the compiler places at a call boundary: see MONITOR_CALLBACKS below. Each hot
root is walked as "call" (a Reach::kCall instance, or listed in CALL_ROOTS) or as "hot"
(any other); a call walk may call MONITOR_CALLBACKS without following them, a hot walk
follows them like any function and so fails on their indirect calls. It fails too when a
hot walk, or the fast path of a --patch'ed function's entry or return (PATCHED_HOOKS),
hands a call root to a guard: there the program may keep values in zmm16-31 and k0-7.

Usage: fast_path_audit.py LIBCALLMON_SO [--objdump PATH]
       fast_path_audit.py --self-test   (the walk's verdicts on made-up code)
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
    "callmon_patched_return_ret": 0,
    "callmon_libcall_entry": 1,    # to the library function
    "callmon_libcall_call": 1,     # calls it (libcall_entry.S)
    "callmon_xray_entry": 0,       # XRay sleds (xray_trampolines.S)
    "callmon_xray_exit": 0,
    "callmon_xray_tail": 0,
    "callmon_sled_enter": 0,       # nop sleds' stubs (sled_call.S)
    "callmon_pg_tramp_enter": 0,   # -pg functions' trampolines (sled_call.S)
    "callmon_sled_return": 0,      # returns with `ret`
}
# The hooks they call: the roots of the C++ fast paths.
HOOKS = ["callmon_pg_enter", "callmon_pg_enter_fentry", "callmon_sled_enter_c", "callmon_pg_exit",
         "callmon_patched_enter", "callmon_patched_exit", "callmon_libcall_enter",
         "callmon_xray_enter_body", "callmon_xray_exit_body", "callmon_xray_tail_body"]
GUARDS = ("callmon_slow_call", "callmon_slow_call_hot")

# Functions only ever handed to callmon_slow_call (every vector component saved): the rare
# slow paths the fast and hot slow paths reach (chunks, bursts, warnings, rescans, a
# thread's set-up). Demangled names up to the parameter list.
FULL_SAVE = {
    "callmon::rt::write_word_interrupted", "callmon::rt::write_hook_pause",
    "callmon::rt::switch_chunk", "callmon::rt::modules_rescan",
    "callmon::rt::enter_slow", "callmon::rt::exit_slow", "callmon::rt::xray_enter_slow",
    "callmon::rt::args_unseen", "callmon_cyg_exit_pause",
    "(anonymous namespace)::libcall_thread_setup",
}
# The kFull instances of the slow paths (template <Reach>, hooks.hpp): Reach::kFull is 0.
FULL_INSTANCE = re.compile(r"ILN7callmon2rt5ReachE0E")
# The kCall instances (Reach::kCall is 2): slow paths of probes at a call boundary.
CALL_INSTANCE = re.compile(r"ILN7callmon2rt5ReachE2E")
# Call roots that are no template instance: the XRay bodies' slow paths (every XRay sled is
# a call boundary: a function's entry, its `ret`, a tail call). Demangled names.
CALL_ROOTS = {
    "callmon::rt::xray_enter_slow_call", "callmon::rt::exit_slow_call",
    "(anonymous namespace)::xray_enter_monotonic", "(anonymous namespace)::xray_exit_monotonic",
}
# The fast paths of a --patch'ed function's entry and of the return every frame gets once
# entry patching is on: they must hand no call root over (patch_entry.S).
PATCHED_HOOKS = ["callmon_patched_enter", "callmon_patched_exit"]
# A monitor's callbacks (monitor_dispatch.cpp: errno kept, then the Monitor's virtual
# function): the program's code, which may use libc, AVX-512, zmm16-31 and k0-7, and clobber
# every register a call may clobber. The call walks may call them, and why that is right:
# slow_call_hot keeps the upper halves of ymm/zmm0-15 (the vector arguments and results)
# and the trampolines the arguments or results themselves; every other register a call may
# clobber is dead where the compiler placed the probe, since it treats the probe as a call
# or puts it where a call begins or ends (gcc gives up -fipa-ra for a function built with
# -pg, -mfentry or -fpatchable-function-entry, clang has no IPRA unless asked, and a library
# call goes through the PLT). A --patch'ed function's callers may know better (gcc's
# -fipa-ra): there the callbacks must be reached through callmon_slow_call only.
# docs/runtime.md, "Monitor mode and the vector state".
MONITOR_CALLBACKS = {"callmon_monitor_call_enter", "callmon_monitor_call_exit"}
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


def audit_hot(funcs, name, problems, queue, taken, mode="hot", callbacks=None):
    """Checks one function reached from a hot slow path, walked as `mode` ("hot" or "call");
    queues what it reaches; adds the monitor callbacks a call walk calls to `callbacks`."""
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
        if mode == "call" and target in MONITOR_CALLBACKS:
            if callbacks is not None:
                callbacks.add(target)
            continue
        if "@plt" in target or target not in funcs:
            problems.append("call out of the library's text " + where)
            continue
        queue.append((target, name))
    taken.extend((t, g, name) for t, g in address_taken(funcs, name))


def is_call_root(mangled, names):
    """Whether a hot root is walked as a call boundary's slow path."""
    return bool(CALL_INSTANCE.search(mangled)) or names.get(mangled, mangled) in CALL_ROOTS


def patched_problems(funcs, hooks):
    """[problem] for each call root the fast paths of `hooks` (and what they reach
    directly) hand over: a --patch'ed point must never reach a monitor on the hot save."""
    names = demangle(funcs.keys())
    problems, seen, queue = [], set(), [h for h in hooks if h in funcs]
    while queue:
        f = queue.pop()
        if f in seen:
            continue
        seen.add(f)
        sub = []
        audit(funcs, f, 0, [], sub)
        queue.extend(sub)
        for target, guard in address_taken(funcs, f):
            if guard == "callmon_slow_call_hot" and is_call_root(target, names):
                problems.append(f"{f} (a --patch'ed point) hands {names[target]}, a call "
                                "boundary's slow path, to callmon_slow_call_hot")
    return problems


def audit_hot_paths(funcs, fast):
    """Walks the hot slow paths from the functions the walked code `fast` hands over."""
    problems, seen, taken, parent = [], set(), [], {}
    for f in fast:  # the fast paths: what they hand over is checked by patched_problems
        taken.extend((t, g, f, "fast") for t, g in address_taken(funcs, f))
    names = demangle(funcs.keys())
    queue, roots, callbacks = [], set(), set()

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
            target, guard, by, by_mode = taken.pop()
            full = names[target] in FULL_SAVE or FULL_INSTANCE.search(target)
            if full and guard == "callmon_slow_call_hot":
                problems.append(f"{names[target]} is listed as reached through callmon_slow_call "
                                "only, but goes to callmon_slow_call_hot")
            if not full:
                call = is_call_root(target, names)
                if call and by_mode == "hot" and guard == "callmon_slow_call_hot":
                    problems.append(f"{names[by]} (a hot slow path) hands {names[target]}, a "
                                    "call boundary's slow path, to callmon_slow_call_hot")
                roots.add(target)
                queue.append((target, by, "call" if call else "hot"))
        if not queue:
            break
        f, by, mode = queue.pop()
        if (f, mode) in seen:
            continue
        seen.add((f, mode))
        if f not in roots:
            parent.setdefault(f, by)
        before = len(problems)
        sub, tk = [], []
        audit_hot(funcs, f, problems, sub, tk, mode, callbacks)
        queue.extend((t, b, mode) for t, b in sub)
        taken.extend((t, g, b, mode) for t, g, b in tk)
        for i in range(before, len(problems)):
            problems[i] += "\n       in " + chain(f)
    return problems, {f for f, _ in seen}, roots, names, callbacks


def self_test():
    """The walk's verdicts on made-up code: a call root may call a monitor callback, a hot
    root may not, nor hand a call root over, nor may a --patch'ed point's fast path; a call
    root calling libc still fails."""
    call_root = "_Z4slowILN7callmon2rt5ReachE2EEvv"
    hot_root = "_Z4slowILN7callmon2rt5ReachE1EEvv"

    def code(*insns):
        return [(0x1000 + 4 * i, b"\x90", m, o) for i, (m, o) in enumerate(insns)]

    def hands(fn):
        return code(("lea", f"0x0(%rip),%rdi        # 2000 <{fn}>"),
                    ("call", "3000 <callmon_slow_call_hot>"), ("ret", ""))

    base = {"callmon_slow_call_hot": code(("ret", "")), "callmon_slow_call": code(("ret", "")),
            "callmon_monitor_call_enter": code(("call", "*%rax"), ("ret", "")),
            "memcpy@plt": code(("ret", ""))}

    def verdict(funcs, fast):
        f = dict(base, **funcs)
        return audit_hot_paths(f, fast)[0] + patched_problems(f, [h for h in fast
                                                                 if h in PATCHED_HOOKS])

    cases = [
        ("a call root calls a monitor callback", False,
         {"callmon_pg_exit": hands(call_root),
          call_root: code(("call", "4000 <callmon_monitor_call_enter>"), ("ret", ""))},
         ["callmon_pg_exit"]),
        ("a hot root calls a monitor callback", True,
         {"callmon_pg_exit": hands(hot_root),
          hot_root: code(("call", "4000 <callmon_monitor_call_enter>"), ("ret", ""))},
         ["callmon_pg_exit"]),
        ("a hot root hands a call root over", True,
         {"callmon_pg_exit": hands(hot_root), hot_root: hands(call_root),
          call_root: code(("ret", ""))}, ["callmon_pg_exit"]),
        ("a --patch'ed entry hands a call root over", True,
         {"callmon_patched_enter": hands(call_root), call_root: code(("ret", ""))},
         ["callmon_patched_enter"]),
        ("a call root calls libc", True,
         {"callmon_pg_exit": hands(call_root),
          call_root: code(("call", "5000 <memcpy@plt>"), ("ret", ""))}, ["callmon_pg_exit"]),
    ]
    for name, fails, funcs, fast in cases:
        got = verdict(funcs, fast)
        check(f"self-test: {name}: {'fails' if fails else 'passes'}", bool(got) == fails, got)
    return summary()


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
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
            check(f"{t} calls only the hooks and trampolines", set(queue) <= set(HOOKS) | set(TRAMPOLINES),
                  sorted(set(queue)))
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
    check("the fast paths of --patch'ed entries and returns hand no call boundary's slow path "
          "to callmon_slow_call_hot", not (pp := patched_problems(funcs, PATCHED_HOOKS)),
          "\n".join(pp))
    hot_problems, hot_seen, roots, names, callbacks = audit_hot_paths(funcs, seen)
    print("hot slow paths: " + ", ".join(sorted(names[r] for r in roots)))
    print(f"  {len(hot_seen)} functions reached")
    check("hot slow paths found (pg_enter_slow's, the monotonic clock's)",
          any("pg_enter_slow" in names[r] for r in roots) and
          any("monotonic" in names[r] for r in roots), sorted(names[r] for r in roots))
    check("the hot slow paths reach nothing outside the library and keep zmm16-31 and k0-7 "
          "(a call boundary's may call a monitor's callbacks)",
          not hot_problems, "\n".join(hot_problems))
    # Monitor mode on the hot save at the compiler's probes (issue 24): the -pg, XRay and
    # library-call probes' slow paths reach both callbacks through callmon_slow_call_hot.
    check("a monitor's callbacks are reached from the call boundaries' hot slow paths",
          callbacks == MONITOR_CALLBACKS, sorted(callbacks))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
