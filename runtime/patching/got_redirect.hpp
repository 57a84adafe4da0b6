// Library calls (docs/patching.md, "Library calls"): the GOT slots through which an
// instrumented module calls functions of other modules are redirected to probes
// (got_stub.hpp), so each such call is recorded as a call of that function.
#pragma once

#include <cstdint>

struct dl_phdr_info;

namespace callmon::rt {

// Redirects the JUMP_SLOT entries of every instrumented module not handled yet. Called from
// the nop-sled pass (sled_patch.cpp: at start-up before the program's constructors, and
// after a dlopen), under its lock; never from a hook's fast path or a signal handler (it
// takes the loader's lock and calls dlvsym). Does nothing under CALLMON_LIBCALL=0.
void libcall_patch_modules();

// `callmon record -p` (attach_sites.cpp): the pass again over every module, its GOT words
// listed (attach_collect.hpp) rather than written; the stubs stay mapped after the detach
// (a call may be on its way through one).
void libcall_attach_pass();

// Library calls of a module of another link namespace (namespace_patch.cpp) whose calls
// the runtime records and which imports nothing that unwinds or jumps: each JUMP_SLOT bound,
// or to be bound lazily, to a function of another module of its namespace (that
// namespace's libc) goes through a probe as in the base namespace, unless
// `instrumented(base, dyn)` says that module's functions record themselves. The
// definitions are looked up in that namespace (namespace_walk.hpp), so only from inside
// for_each_other_namespace_module's visit; under the sled pass's lock. GLOB_DAT words are
// left alone there. Does nothing under CALLMON_LIBCALL=0.
void libcall_patch_namespace_module(const dl_phdr_info* info, const void* dyn,
                                    bool (*instrumented)(uintptr_t base, const void* dyn));

// How many slots are redirected in this process, and how many were refused (excluded
// names, GLOB_DAT slots, unresolvable targets): for `callmon info` (meta file).
unsigned libcall_slot_count();
unsigned libcall_refused_count();

// The address recorded for the i-th redirected slot's calls and the name the program
// called it by (its module's .dynstr, valid while that module is loaded), i < count. The
// process writes one `symbol` meta line per address (the symbolizer would otherwise pick
// among the library's aliases: cfree for free, __waitpid for waitpid).
unsigned libcall_name_count();
bool libcall_name(unsigned i, uintptr_t* fn, const char** name);

// Whether any redirected module is built with -finstrument-functions: the process set-up
// calibrates those hooks, not the -pg ones, even when a library call comes first.
extern bool g_libcall_cyg_program;

// 1 when the common entry calls the library function (its return predicted, coming back
// through callmon_libcall_block's return point: libcall_entry.S), 0 when it jumps there
// with the return redirected: an attach's stubs, or no room to publish that block with the
// stubs' pools (sled_call_stub.hpp). Decided by libcall_calls_setup.
extern uintptr_t g_libcall_calls;

// Decides g_libcall_calls once, outside an attach: by the first start-up pass before any
// slot is redirected, or by the library-call calibration before it measures (a shared
// library's constructor may make the first hook, and so the process set-up, run first).
void libcall_calls_setup();

}  // namespace callmon::rt
