// Detach from an XRay build (clang -fxray-instrument): where a pc inside a patched sled goes
// once the sled's compiled bytes are back (docs/patching.md, "Attaching", step 6). A patched
// sled is two instructions, `mov $id, %r10d` (6 bytes) and a `call`/`jmp rel32` (5 bytes),
// so a thread can be between them: stopped there, or interrupted there by a signal whose
// handler has not returned yet (its signal frame holds that pc). Resumed there after the
// undo, it would run the middle of the compiled sled's nops. It goes where the compiled sled
// takes a thread instead: past the sled (entry, tail: `jmp .+11`) or to its `ret` (exit).
// The call the patched sled was about to make is not made: the recording has ended. Pure:
// unit-tested (tests/unit/attach_xray_leave_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "callmon/attach_abi.hpp"

namespace callmon::attach {

// `patches` sorted by address. For a pc strictly inside a kXraySled patch, sets *pc to where
// the compiled sled takes it and returns true; else leaves it and returns false.
bool leave_xray_pc(const std::vector<attach_abi::Patch>& patches, uint64_t* pc);

}  // namespace callmon::attach
