// Attach: what to patch in a running program (docs/patching.md, "Attaching"). The runtime
// only lists the changes; `callmon record -p` writes them while every thread is stopped.
#pragma once

#include <cstdint>

#include "callmon/attach_abi.hpp"

struct dl_phdr_info;

namespace callmon::rt {

struct AttachSites {
  attach_abi::Patch* patches;  // mapped once, reused by later attaches
  uint32_t count;
  uint64_t sleds, got_pg, got_cyg, got_unwind, refused;
  uint64_t entries, libcalls;  // --patch function entries, library-call GOT words
  uint64_t xray;               // clang -fxray-instrument sleds (xray_sleds.hpp)
  const char* failure;  // why nothing can be patched, or nullptr
};

// Lists every patch for the loaded modules (the runtime's own excepted): each nop sled at a
// confirmed function entry becomes `call __fentry__` (through a stub page when out of rel32
// reach: stubs are mapped here), and each GOT word bound to mcount, __fentry__,
// __cyg_profile_func_enter or _exit gets the runtime's function, and so does each bound to
// a function the runtime interposes to follow exceptions, longjmp and stack walks
// (_Unwind_RaiseException, longjmp, backtrace...). Takes the loader's lock
// (dl_iterate_phdr) and maps memory: only while the program's threads run.
// Each XRay sled of a selected function is listed as xray_patch_module would write it.
// With --patch, the entry patcher's selection is listed too (each function's first bytes
// become `jmp` to its trampoline, prepared now), and so are the library-call pass's GOT words
// (unless CALLMON_LIBCALL=0), as attach_collect.hpp says.
void attach_collect_sites(AttachSites* out);

// attach_collect_sites's work for one module: its sleds and hook GOT words listed (the
// runtime's own GOT rebound to its hooks instead). Also for modules dlopen'ed while attached
// (attach_dlopen.hpp). Inside dl_iterate_phdr.
void attach_collect_module(const dl_phdr_info* info, AttachSites* out);

// The next free entry of out's list, or nullptr (out->failure says why) when it is full.
attach_abi::Patch* attach_sites_next(AttachSites* out);

// Whether a GOT word at `slot` is listed already (the interposers' words, which the
// library-call pass must leave to them).
bool attach_sites_has_word(const AttachSites* out, uintptr_t slot);

}  // namespace callmon::rt
