// Entry patching (`callmon record --patch=REGEX`; docs/patching.md, "Entry patching"):
// functions of programs built with no instrumentation flag at all get their first
// instructions replaced by a `jmp rel32` to a trampoline of their own (entry_tramp.hpp)
// that calls the entry probe, runs the moved instructions (entry_reloc.hpp) and jumps
// back. The exit is the -pg -mfentry mode's return-address hijack, so exceptions, longjmp,
// threads, fork and signals are handled as there. A function that cannot be patched
// safely is left alone and listed, with the reason, in the process's meta file
// (`patch-refused` lines) and so in `callmon info`.
#pragma once

#include <cstdint>

struct dl_phdr_info;

namespace callmon::rt {

// Patches the selected functions of every loaded module not handled yet: the executable,
// and libraries whose path matches CALLMON_PATCH_MODULE. Does nothing unless CALLMON_PATCH
// is set. Called by the sled pass (sled_patch_modules), under its lock: from the library's
// constructor, before the program's code runs, and after a dlopen.
void entry_patch_modules();

// One module of another link namespace (namespace_patch.hpp), in the sled pass after
// entry_patch_modules: patched as a base namespace's module would be, or, when `refuse` is
// given, listed as refused for that reason (a `patch-module` line). Returns false when
// --patch is off. entry_patch_namespaces_done writes the lines these calls made.
bool entry_patch_module(dl_phdr_info* info, const char* refuse);
void entry_patch_namespaces_done();

// `callmon record -p` (attach_sites.cpp): forgets what an earlier attach patched and read,
// and runs the pass again with the attach's options, its jumps listed (attach_collect.hpp)
// rather than written.
void entry_patch_attach_pass();

// Appends the meta lines the passes wrote since the last call (which modules were patched,
// which functions refused and why) to the process's meta file. Called by the process
// set-up once the meta file exists, and by each later pass.
void entry_patch_flush_meta();

// `record -p` (attach_meta.hpp): while held, entry_patch_flush_meta writes nothing.
void entry_patch_hold_meta(bool hold);

// `record -p` (attach_meta.hpp): in the lines not written yet, the functions whose jumps at
// `sites` were dropped are listed as refused for `why` (attach_meta_drop).
void entry_patch_drop_patched(const uint64_t* sites, unsigned n, const char* why);

// In a fork child, once its own meta file exists: appends every meta line the passes wrote
// so far (the child's code is patched as the parent's was; its meta file says so too).
void entry_patch_after_fork_child();

// Whether any function was patched: the process then records through the -pg hooks (the
// calibration measures those; their probe functions are patched like the program's).
bool entry_patched_any();

// Whether [lo, hi) overlaps the code of a module with a patched function: the library-call
// pass (got_redirect.cpp) records such a module's calls into other modules, and leaves
// calls into it to its own probes. Runs after the entry pass (sled_patch_modules).
bool entry_patched_code(uintptr_t lo, uintptr_t hi);

}  // namespace callmon::rt
