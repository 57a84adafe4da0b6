// The functions of a -pg (mcount) module, entered through trampolines that call them
// (docs/modes.md, "How the -pg modes work"). gcc and clang call mcount after the prologue
// (`push %rbp; mov %rsp,%rbp`, often more pushes, clang's argument moves), where the only
// way to record the exit is the redirected return address, mispredicted at every return.
// At start-up each such function gets --patch's trampoline (entry_tramp.hpp) with the -pg
// entry of the sled stubs: its first instructions move into the trampoline, which records
// the entry as `call __fentry__` would and *calls* the function, and its call of mcount
// becomes a nop of the same length (it preserves every register, so the nop is exact). A
// function whose prologue cannot be moved (entry_reloc.hpp, the module's branch targets),
// or whose first branch is not that call, keeps its call of mcount: recorded as before.
#pragma once

#include <link.h>

#include "runtime/patching/sled_elf.hpp"

namespace callmon::rt {

// Patches the module `info` (its file at `path`, its executable segments in `m`) when it
// calls mcount through its own PLT or GOT. Called by the sled pass (sled_patch.cpp), under
// its lock, for base-namespace modules: in the library's constructor before the program's
// code has run, and after a dlopen. Not for an attach (its GOT redirection of mcount stays).
void mcount_patch_module(const dl_phdr_info* info, const char* path, const SledModule& m);

// Functions given trampolines so far in this process, and functions found calling mcount in
// their prologue that keep that call (their prologue cannot be moved, a branch of the module
// targets the bytes the jump would replace, no room for trampolines, capstone missing): the
// `pg-trampolines` meta line (docs/format.md). A fork child's are its parent's.
unsigned mcount_tramp_count();
unsigned mcount_left_count();

// Once a function has a trampoline: the -pg calibration's probes get ones of their own
// (tramp_probes.hpp), so the calibration measures this path. Called after the modules.
void mcount_patch_calibration_probes();

}  // namespace callmon::rt
