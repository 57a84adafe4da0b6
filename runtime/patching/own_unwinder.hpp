// A program that carries its own copy of the C++ unwinder (linked with -static-libgcc
// -static-libstdc++; GCC's own drivers are) unwinds with code callmon cannot interpose, and
// that copy knows nothing of the runtime's trampolines. An exception thrown through a frame
// whose return the runtime changed (a library call, a -pg, -mfentry or nop-sled function,
// a --patch'ed one) then ends the program in std::terminate. The sled pass reads every
// module (sled_elf.hpp) and, once one carries such a copy, the passes leave those frames
// out for the whole process: no library calls, and unless CALLMON_OWN_UNWINDER=allow
// (record --allow-own-unwinder) no -pg hooks, sleds nor --patch; the program's
// -finstrument-functions and XRay functions are recorded as usual (their hooks change no
// return). Said once on stderr and in the meta file (docs/reliability.md).
//
// `callmon record` refuses its own program before it runs when it would lose its recorded
// functions this way; this is the guard for the rest: the children of a recorded program,
// `trace`, `run`, `inject`, `coverage`.
#pragma once

#include "callmon/format/own_unwinder.hpp"
#include "runtime/patching/sled_elf.hpp"

namespace callmon::rt {

// What the guard left out: format::OwnUnwinderSkip bits.
using format::kSkipLibcalls;
using format::kSkipPatch;
using format::kSkipPg;
using format::kSkipSleds;

// Whether a module of this process carries its own unwinder (library calls are then left
// out), and whether the functions entered through changed returns are left out too.
bool own_unwinder_found();
bool own_unwinder_blocks_returns();

// Takes a module's facts (the executable's when `main_program`), `path` naming it, and
// notes whether it carries its own unwinder: the executable when it defines
// _Unwind_RaiseException, or has exception tables and imports no _Unwind_ function nor
// personality routine (a stripped one); a library when it defines it only in .symtab (an
// exported definition is preempted by the runtime's interposer). Only modules with
// exception tables count: without a landing pad nothing can catch, so an exception ends
// the program either way. Then, once returns are blocked, the module's -pg hooks and
// nop-sled lists are cleared from `m` and marked left out.
void own_unwinder_guard(SledModule& m, bool main_program, const char* path);

// A pass left out `what` (OwnUnwinderSkip bits). The -pg bit also makes the runtime's mcount
// and __fentry__ forward to glibc's (or return at once), so those hooks change nothing.
void own_unwinder_skipped(unsigned what);

// All bits skipped so far (the meta line), and the stderr line: said once per process,
// naming what was left out, when anything was. Called after each sled pass.
unsigned own_unwinder_skips();
void own_unwinder_say();

}  // namespace callmon::rt
