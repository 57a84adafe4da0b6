// Whether a function moves its own frame: hand-written code that reads its return address
// first and later loads the stack pointer from another register, to return from a frame it
// built elsewhere (libffi's ffi_call_unix64, under every call of Python's ctypes:
// `mov (%rsp),%r10` ... `lea 0xb8(%r10),%rsp`). A --patch'ed function's return through
// such a frame is followed by its trampoline's return point (hooks_pg.cpp,
// moved_return_frame) while the runtime records; but an attach's patch cannot stay past
// its detach, which puts back the slot the function's entry redirected, not the copy the
// function keeps: that function would return into a trampoline with no frame. So an
// attach refuses it (entry_patch.cpp; docs/patching.md, "Refused").
#pragma once

#include <cstddef>
#include <cstdint>

namespace callmon::rt {

// `code`: the function's bytes (after an endbr64), `size` of them readable. Decodes them
// with the length decoder (entry_length.hpp) only when the first instruction reads the
// return address (`mov (%rsp),reg` or a `pop`); an encoding it does not know ends the
// look (false).
bool entry_moves_frame(const uint8_t* code, size_t size);

}  // namespace callmon::rt
