// How an injection reaches the program: the monitor's callbacks cannot throw or return for
// the function (they run inside the runtime's hook and are noexcept), so they replace a
// return address on the stack with one of the stubs of inject_stubs.S and leave the rest
// to the stub, which runs once the hook has returned. What the stub needs is kept in a
// thread-local until then (one at a time: nothing instrumented runs in between).
//
// The slots, from the runtime's frame layout (runtime/recording/thread_state.hpp, Frame::sp; the
// CallInfo::frame of the monitor API):
//  - -finstrument-functions: frame = the hook's frame address, frame + 8 holds the hook's
//    return address into the instrumented function (at entry and, the stack pointer being
//    the same, at exit);
//  - -pg -mfentry: frame + 8 holds __fentry__'s return address (the function's second
//    instruction), frame + 16 the function's own return address;
//  - -pg (mcount): frame + 16 the function's own return address;
//  - XRay sleds: as -pg -mfentry, frame + 8 holding the entry trampoline's return into the
//    entry sled (the function's first 11 bytes: `mov $id, %r10d; call`).
// Each arm_* checks that the slot holds what it should before touching it.
#pragma once

#include <cstdint>

#include "tools/inject/inject_config.hpp"

namespace callmon::inject {

// -finstrument-functions: the entry hook of the call at `function` returns into a throw of
// `rule`'s exception, from the function's frame. `slot` holds the hook's return address.
// False (nothing changed) when that address is not within the function's first 64 KiB.
bool arm_throw(uintptr_t* slot, uintptr_t function, const Rule& rule);

// Where an entry hook at the function's first instruction returns into the function.
enum class EntryProbe {
  kFentry,  // `call __fentry__`: function + 5 or + 6 (`function` is that call)
  kXray,    // an XRay entry sled: function + 11
};

// -pg -mfentry, XRay: the entry hook returns into a throw of `rule`'s exception from the
// caller's call of the function. `slot` holds the hook's return address, which must be
// where `probe` returns. False (nothing changed) otherwise.
bool arm_throw_at_entry(uintptr_t* slot, uintptr_t function, const Rule& rule, EntryProbe probe);

// -pg -mfentry, XRay: the entry hook returns into a `return value` for the function. `slot`
// as for arm_throw_at_entry. False (nothing changed) otherwise.
bool arm_return(uintptr_t* slot, uintptr_t function, int64_t value, EntryProbe probe);

// The return address in `slot` (the exit hook's, or the function's own in the -pg modes,
// after the runtime has put the real one back) goes through errno = `error_number` first.
// `near`, when non-zero, is the function: the slot must then hold an address in its first
// 64 KiB. False (nothing changed) when the slot does not hold what it should.
bool arm_errno(uintptr_t* slot, uintptr_t near, int error_number);

}  // namespace callmon::inject
