// A table-driven x86-64 instruction length decoder for the module-wide sweep for branch
// targets (entry_targets.hpp): capstone formats every instruction's text, which made the
// sweep of a 2 MB executable take a third of a second; this decodes the common encodings
// (legacy, REX, VEX and EVEX prefixes, the one-, two- and three-byte opcode maps, ModRM,
// SIB, displacements, immediates) and answers "unknown" for anything else, which the caller
// hands to capstone. Pure; checked against capstone over whole libraries in
// tests/unit/runtime_entry_length_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

// The length of the instruction at `code` (at most `avail` bytes readable), and in
// `*opcode_at` where its opcode byte is (past prefixes; for VEX/EVEX forms 0xff: no
// branch). 0 when the encoding is one this decoder does not know, or runs past `avail`.
size_t entry_insn_length(const uint8_t* code, size_t avail, size_t* opcode_at);

// Whether `b` is one of the legacy prefixes (operand/address size, lock, rep, segment).
bool is_legacy_prefix(uint8_t b);

}  // namespace callmon::rt
