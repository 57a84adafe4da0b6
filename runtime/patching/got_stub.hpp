// Per-slot trampolines of the library-call probes (docs/patching.md, "Library calls"):
// small stubs in pages of their own that load the address of their slot's data into r11
// and jump to the common entry callmon_libcall_entry (arch/x86_64/libcall_entry.S).
#pragma once

#include <cstdint>

namespace callmon::rt {

// What a stub hands the common entry (r11 points to it).
struct LibcallData {
  uintptr_t fn;      // the address recorded for the call: the symbol's definition
  uintptr_t target;  // where the call goes on to (the resolved function, an ifunc's choice)
};

// A batch of stubs being written: stubs are added to a writable page, which
// got_stubs_seal() makes read-only and executable (never writable and executable at once).
// Returns the new stub's address, or 0 when no page could be mapped. Not thread-safe: the
// redirection pass is serialised.
uintptr_t got_stub_add(const LibcallData& d);
void got_stubs_seal();

// Whether `addr` is one of the stubs (a slot redirected already).
bool got_is_stub(uintptr_t addr);

// How many stubs exist (redirected slots).
unsigned got_stub_count();

}  // namespace callmon::rt
