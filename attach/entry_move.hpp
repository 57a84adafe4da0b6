// Attach with --patch: where a thread stopped inside the first bytes of a function about to
// be entry-patched goes (docs/patching.md, "Attaching"). The `jmp rel32` replaces the
// function's first five bytes; a thread whose next instruction starts inside them would
// resume in the middle of the jump. It is moved to the same instruction in the
// trampoline's copy of the displaced instructions (same registers, same stack: the copy
// does what the original did, RIP-relative operands fixed) and goes back to the original
// code at the copy's end. Pure functions on the patch list and the registers: unit-tested.
#pragma once

#include <sys/user.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "callmon/attach_abi.hpp"

namespace callmon::attach {

// Whether a stopped thread with these registers is inside an interrupted system call that
// the kernel restarts when it resumes: it then backs rip up over the 2-byte `syscall`.
bool restarts_syscall(const user_regs_struct& r);

enum class EntryMove {
  kNone,     // not inside any entry patch's first bytes: leave the thread as it is
  kMoved,    // rip set to the matching place in the trampoline's copy
  kUnknown,  // inside, but at no instruction start the runtime listed: step it out
};

// `patches` sorted by address. For a thread whose next instruction (after a system-call
// restart) starts strictly inside the five bytes of a kEntryJump patch, sets r->rip to the
// matching place in its copy. A thread at the function's first byte is left: it will run
// the jump, and be recorded entering the function.
EntryMove move_out_of_entry(const std::vector<attach_abi::Patch>& patches, user_regs_struct* r);

// The same for the pc a signal handler will return to (the rip saved in its signal frame,
// attach_unwind.hpp's signal_pcs): moved into the copy like a stopped thread's (the kernel
// backed an interrupted system call up before the handler ran, so no restart applies); a pc
// strictly inside a sled (gcc's five 1-byte nops) goes past it (the nops skipped, the call
// that replaces them not made: that call of the function is not recorded). kUnknown: inside
// an entry patch at no listed instruction start: that patch must not be written (a handler
// cannot be stepped). `*at` is the patch's index in `patches` when not kNone.
EntryMove move_saved_pc(const std::vector<attach_abi::Patch>& patches, uint64_t* rip, size_t* at);

}  // namespace callmon::attach
