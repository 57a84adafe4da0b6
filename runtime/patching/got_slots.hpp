// The GOT API: enumerating a loaded module's GOT slots (JUMP_SLOT and GLOB_DAT relocations)
// from its dynamic section, and storing into a slot even when full RELRO made it read-only.
// Shared by the library-call probes (libcall) and attaching (redirecting the hooks' imports).
#pragma once

#include <cstdint>

namespace callmon::rt {

struct GotSlot {
  uintptr_t* slot;   // the GOT word
  const char* name;  // the relocation's symbol name (in the module's .dynstr)
  unsigned type;     // R_X86_64_JUMP_SLOT or R_X86_64_GLOB_DAT
};

// Calls visit(slot, ctx) for every JUMP_SLOT and GLOB_DAT relocation of the loaded
// module whose load address is `base` and dynamic section `dyn` (link_map's l_addr,
// l_ld). No allocation, no lock: usable while other threads are stopped. A module without
// a dynamic section, symbol table or string table visits nothing.
void for_each_got_slot(uintptr_t base, const void* dyn,
                       void (*visit)(const GotSlot&, void*), void* ctx);

// Stores `value` in `slot`; a read-only page (full RELRO) is made writable for the
// store and put back. Returns false (errno set) if mprotect failed.
// No allocation; the page's protection is read from /proc/self/maps with raw reads.
bool store_got_slot(uintptr_t* slot, uintptr_t value);

}  // namespace callmon::rt
