// Writing a loaded module's code: the one 5-byte instruction each patcher writes per site
// (the sled patcher's `call`, the entry patcher's `jmp`) and the protection changes around
// it. Shared by sled_patch.cpp and entry_patch.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/patching/sled_elf.hpp"

namespace callmon::rt {

// Writes `opcode rel32` (0xe8 call, 0xe9 jmp) to `to` at `site`, whose page is writable. A
// site inside one aligned 8-byte word is written with a single 8-byte store, which
// instruction fetch sees whole (a concurrent fetch gets the old or the new instruction);
// the others byte by byte. `to` must be within rel32 reach of site + 5.
void write_rel32(uintptr_t site, uint8_t opcode, uintptr_t to);

// The length of the call of __fentry__ (`fentry`) at `site`: 5 for `call rel32` (e8), 6 for
// `call *sym@GOTPCREL(%rip)` (ff 15, the runtime's own PIC code), 0 for anything else.
size_t fentry_call_length(uintptr_t site, uintptr_t fentry);

// The -pg calibration's probe functions (calibration_probe_pg.cpp), whose first instruction
// (after an endbr64) is that call, and the number of them: the sled and entry patchers send
// them their own way so the calibration measures the path the program's calls take.
size_t pg_calibration_probes(uintptr_t* out, size_t max);

// Makes the module's executable segments writable and still executable (`on`), or puts their
// original protection back. When a segment cannot be writable and executable at once and
// `write_only_ok` (nothing else runs: the start-up pass), it is made writable without exec.
// False, with every segment put back, when mprotect refused.
bool set_code_writable(const SledModule& m, bool on, bool write_only_ok);

}  // namespace callmon::rt
