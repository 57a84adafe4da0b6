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

// Writes `opcode rel32` at `site` in the runtime's own code (read-only): its pages are made
// writable for the store and put back. Nothing written when mprotect refuses.
void write_rel32_text(uintptr_t site, uint8_t opcode, uintptr_t to);

// The call at `site` (6 bytes readable): `call rel32` (e8, 5 bytes; `*to` its target) or
// `call *disp(%rip)` (ff 15, 6 bytes: GCC's PIC calls through the GOT; `*to` the word it
// reads, `*through_word` set). 0 for any other instruction.
uint8_t decode_call(uintptr_t site, uintptr_t* to, bool* through_word);

// Whether `p` starts with endbr64 (f3 0f 1e fa, -fcf-protection), the instruction a
// function's entry patch or call of __fentry__ comes after.
inline bool is_endbr64(const uint8_t* p) {
  return p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa;
}

// The -pg calibration's probe functions (calibration_probe_pg.cpp) whose first instruction
// (after an endbr64) still calls __fentry__ (`fentry`): the sled and entry patchers send them
// their own way, so the calibration measures the path the program's calls take. `len` is
// the call's: 5 for `call rel32`, 6 for `call *sym@GOTPCREL(%rip)` (the runtime's PIC code).
struct PgProbeSite {
  uintptr_t fn, site;
  size_t len;
};
size_t pg_calibration_sites(uintptr_t fentry, PgProbeSite* out, size_t max);

// Makes the module's executable segments writable and still executable (`on`), or puts their
// original protection back. When a segment cannot be writable and executable at once and
// `write_only_ok` (nothing else runs: the start-up pass), it is made writable without exec.
// False, with every segment put back, when mprotect refused.
bool set_code_writable(const SledModule& m, bool on, bool write_only_ok);

}  // namespace callmon::rt
