// Attach: what to patch in a running program (docs/patching.md, "Attaching"). The runtime
// only lists the changes; `callmon record -p` writes them while every thread is stopped.
#pragma once

#include <cstdint>

#include "callmon/attach_abi.hpp"

namespace callmon::rt {

struct AttachSites {
  attach_abi::Patch* patches;  // mapped once, reused by later attaches
  uint32_t count;
  uint64_t sleds, got_pg, got_cyg, got_unwind, refused;
  const char* failure;  // why nothing can be patched, or nullptr
};

// Lists every patch for the loaded modules (the runtime's own excepted): each nop sled at a
// confirmed function entry becomes `call __fentry__` (through a stub page when out of rel32
// reach: stubs are mapped here), and each GOT word bound to mcount, __fentry__,
// __cyg_profile_func_enter or _exit gets the runtime's function, and so does each bound to
// a function the runtime interposes to follow exceptions, longjmp and stack walks
// (_Unwind_RaiseException, longjmp, backtrace...). Takes the loader's lock
// (dl_iterate_phdr) and maps memory: only while the program's threads run.
void attach_collect_sites(AttachSites* out);

}  // namespace callmon::rt
