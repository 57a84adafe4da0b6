// Which functions the nop-sled patcher turns on (docs/modes.md, "Nop sleds"). A function
// that is not selected keeps its nops and costs nothing while the program is recorded.
#pragma once

#include <cstdint>

namespace callmon::rt {

// Decides, at patch time, whether the function starting at `function_start` (a run-time
// address, after the load bias) is recorded. Called once per sled site, from the patcher
// only (start-up constructor or after a dlopen), never from a hook: it may take its time
// but must not allocate through the program's malloc or take locks the loader holds.
//
// Today every function is selected. This is the place where the record-time include /
// exclude filters plug in (symbolize `function_start`, match the regexes).
bool sled_select(uintptr_t function_start);

}  // namespace callmon::rt
