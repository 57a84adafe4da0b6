// Call-frame information for entry trampolines (docs/patching.md, "Unwinding through a
// trampoline"). A thread can stop inside a trampoline's copy of a function's first
// instructions: a `syscall` moved there blocks, and a signal handler's backtrace() or
// pthread_cancel's forced unwind starts from that pc. Without an FDE the unwinder ends its
// walk there (the frames above are not listed, their cleanups do not run). Each pool gets
// an .eh_frame of its own, one CIE and one FDE per trampoline, registered with the unwinder
// glibc uses (libgcc_s.so.1's __register_frame): from the trampoline's `call` on, the CFA
// is the function's entry one (%rsp + 8, return address at CFA - 8), then follows what the
// copy pushes or subtracts (push, sub/add $imm,%rsp, the pushed return address of a moved
// call) and the registers it saves; a `mov %rsp,%rbp` makes the CFA %rbp-based. The FDE
// ends after an instruction that changes %rsp in another way (its pcs have no CFI then).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/patching/entry_tramp.hpp"

namespace callmon::rt {

// Writes the CFA program of a trampoline whose moved code `copy` (at most `cap` bytes,
// running at `copy_at`, which is kTrampCodeOffset - kTrampEntry bytes after the FDE's
// start) into `out` (at most `out_cap` bytes), and sets `*range` to the bytes the FDE covers
// from the trampoline's call. Returns the program's length (0: the entry state holds
// throughout), SIZE_MAX when it does not fit. Pure:
// decodes with entry_decode (entry_decoder_error() must be null). Unit-tested.
size_t entry_cfi_program(const uint8_t* copy, size_t cap, uintptr_t copy_at, uint8_t* out,
                         size_t out_cap, size_t* range);

// Builds the .eh_frame of every trampoline in the sealed `pool` and registers it with
// libgcc_s.so.1 (loaded if it is not). False when libgcc_s or its __register_frame is
// missing, or no memory: the trampolines then work as before, without CFI. Takes the
// program's malloc (libgcc's registration allocates): the caller marks it RuntimeScope.
bool entry_cfi_register(const TrampPool& pool);

}  // namespace callmon::rt
