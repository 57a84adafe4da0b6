// Attach: modules the program dlopen's while `callmon record -p` is attached (docs/patching.md,
// "Modules loaded while attached"). At the attach the program's GOT words of dlopen, dlmopen,
// dlsym and dlclose are listed with the other patches, to become the runtime's wrappers
// (the ones LD_PRELOAD puts first under `callmon record`); the detach puts them back. A
// dlopen then asks for the start-up pass (sled_patch.hpp), which, while attached, runs
// attach_dl_pass instead: the new modules' patches are listed exactly as at the attach, then
// written in-process, as start-up writes a dlopen'ed module's, and kept in the attach's list
// so that the detach undoes them with the rest. A module dlclose'd while attached has its
// entries dropped from the list: the detach leaves its (unmapped or reused) addresses alone.
#pragma once

#include <cstdint>

#include "runtime/patching/attach_sites.hpp"

struct dl_phdr_info;

namespace callmon::rt {

// Looks up the runtime's own dlopen, dlmopen, dlsym and dlclose in its handle `self`.
void attach_dl_find_wrappers(void* self);

// The runtime's wrapper for a GOT word bound to `name`, or 0 when `name` is none of those.
uintptr_t attach_dl_wrapper(const char* name);

// At the end of attach_collect_sites: every module loaded now is the attach's (listed by it);
// `sites` is the list later modules' patches are appended to.
void attach_dl_begin(AttachSites* sites);

// While attached, after a dlopen (from sled_patch_modules, under its lock): lists, writes
// and keeps the patches of the modules loaded since the attach or the last pass, then, if
// there were any, wraps the signal handlers their constructors installed
// (signal_handlers_wrap_running). Marks the tool's pokes so far answered (DlSync::passed).
// Takes the loader's lock and mprotects: never from a signal handler.
void attach_dl_pass();

// Whether no thread holds the list's lock now (the tool's injected pass, which must not
// wait for a lock its own thread may hold: sled_patch_attach_try).
bool attach_dl_idle();

// The detach (callmon_attach_prestop), before the tool reads the list: no later pass of
// this session patches anything (a module loaded from now on is left as it is: the tool
// would not know to undo it). Waits for a pass under way.
void attach_dl_freeze();

// A thread's first hook of the session (attach_inherit_take), once the tool's stop is over:
// the attach's held meta lines corrected and written (attach_meta.hpp), unless a pass
// holds the list's lock (it does that itself then).
void attach_dl_release_meta();

// Around the real dlclose (interpose_dlclose.cpp): begin counts a dlclose under way in the
// shared DlSync (true when attached), so that the detach does not read the list while an
// unloaded module's entries are still in it; after_unload drops the list entries of every
// module no longer loaded (when attached), then ends the count begin took (`begun`).
bool attach_dl_unload_begin();
void attach_dl_after_unload(bool begun);

// What the runtime shares with the tool while attached (attach_abi.hpp, DlSync).
const attach_abi::DlSync* attach_dl_sync();

// From a chunk switch (thread_state.cpp), any context: true once per poke of the tool (the
// program's memory map changed: a module loaded by a dlopen that went through no redirected
// GOT word, e.g. libc's own for NSS or iconv, or a dlopen pointer taken before the attach).
// The caller then asks for the pass at its thread's next hook (kGuardRescan), which lists
// and writes the new modules' patches that are safe with their code maybe running already.
// No lock, no system call.
bool attach_dl_poked();

}  // namespace callmon::rt
