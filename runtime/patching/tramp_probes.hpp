// The -pg calibration's probe functions (calibration_probe_pg.cpp) sent through entry
// trampolines (entry_tramp.hpp) like the program's functions, so the start-up calibration
// measures the path the program's calls take: the trampoline, its entry probe, the copy,
// the exit. Used by --patch (entry_patch.cpp) and by -pg modules' mcount functions
// (mcount_entry.cpp), each with its own entry and exit.
#pragma once

#include <cstdint>

namespace callmon::rt {

// Gives each probe that still starts with `call __fentry__` a trampoline calling `entry`
// and leaving through `exit`, whose copy is a jump back past that call (dropped). Probes
// already sent elsewhere (a sled stub) are left alone. Does nothing when no pool can be
// mapped or sealed.
void tramp_calibration_probes(uintptr_t entry, uintptr_t exit);

}  // namespace callmon::rt
