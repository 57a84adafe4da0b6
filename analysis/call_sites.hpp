// Call sites from the code: the source line a function calls another from, found by reading
// the caller's machine code for a direct call (x86-64 "call rel32") to the callee and asking
// the DWARF line table for the line of the return address minus one, as debuggers place a
// frame's line. Recordings hold functions, not return addresses, so this is what lets the
// callgrind export put a call's cost on the line of the call rather than on the caller's
// first line. Calls through the PLT, through pointers or from inlined copies are not found.
#pragma once

#include <cstdint>

#include "analysis/elf_image.hpp"

namespace callmon::analysis {

// The line of the first direct call (lowest address) in the function of `image` that covers
// `caller_vaddr` to the function that covers `callee_vaddr`; 0 when there is none, the
// functions are unknown, or the line table does not cover the call.
uint32_t call_site_line(ElfImage& image, uint64_t caller_vaddr, uint64_t callee_vaddr);

}  // namespace callmon::analysis
