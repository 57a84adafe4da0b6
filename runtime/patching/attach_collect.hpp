// Attach with --patch and library calls (docs/patching.md, "Attaching"): while
// attach_collect_sites runs, the entry patcher (entry_patch.hpp) and the library-call pass
// (got_redirect.hpp) prepare everything as at start-up (trampolines, stubs, their pages
// sealed) but hand each write to the list `callmon record -p` writes with every thread
// stopped, instead of making it.
#pragma once

#include <cstdint>

#include "runtime/patching/attach_sites.hpp"
#include "runtime/patching/entry_reloc.hpp"

namespace callmon::rt {

// Between these two, attach_collecting() is true and the list functions add to `out`.
// attach_collect_begin returns the list collected into before (nullptr: none), which
// attach_collect_end(prev) makes current again.
AttachSites* attach_collect_begin(AttachSites* out);
void attach_collect_end(AttachSites* prev = nullptr);
bool attach_collecting();

// Lists `jmp tramp_entry` over the first five bytes at `site`; `copy` is where the
// trampoline's moved instructions start, `r` their relocation (its instruction
// boundaries). False when the list is full.
bool attach_list_entry(uintptr_t site, uintptr_t tramp_entry, uintptr_t copy, const Relocated& r);

// Lists the 11-byte XRay sled at `site` (holding `old_bytes`) to become `new_bytes`. False
// when the list is full.
bool attach_list_xray(uintptr_t site, const uint8_t* old_bytes, const uint8_t* new_bytes);

// Lists the GOT word at `slot` (holding `now`) to become `stub`. False when it is not
// listed: the list is full, or the word is an interposer's already (left to it).
bool attach_list_libcall(uintptr_t* slot, uintptr_t now, uintptr_t stub);

}  // namespace callmon::rt
