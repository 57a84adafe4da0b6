// Recording of arguments and return values (callmon record -A/-R/--auto-args) in the -pg,
// -mfentry and nop-sled modes, whose trampolines see the registers as the function gets
// them. What to record comes from the selection service as a select::SpecEntry per
// function (filter_select.hpp, function_spec); the values are encoded as in
// include/callmon/format/args.hpp. Strings are read with process_vm_readv, so a wild
// pointer gives "unreadable" instead of a crash; everything else is a register or stack
// slot copy. Signal-safe, no malloc.
#pragma once

#include <cstdint>

#include "callmon/select_protocol.hpp"
#include "runtime/recording/thread_state.hpp"

namespace callmon::rt {

// Writes the ARGS record of a call just entered, right after its ENTER. `saved` is the
// entry trampoline's save area (pg_entry.S: rdi rsi rdx rcx r8 r9 rax r10, then xmm0..7 at
// 16 bytes each); `ret_slot` the function's return-address slot (stack arguments follow it).
void put_args(ThreadState* s, bool nested, uint64_t t, const select::SpecEntry& spec,
              const uint64_t* saved, const uintptr_t* ret_slot);

// Writes the RETVAL record of a call that just returned, right after its EXIT. `saved` is
// the exit trampoline's save area (pg_return.S: rax, rdx, xmm0, xmm1).
void put_retval(ThreadState* s, bool nested, uint64_t t, uint8_t ret_format,
                const uint64_t* saved);

}  // namespace callmon::rt
