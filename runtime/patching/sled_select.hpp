// Which functions the nop-sled patcher turns on (docs/modes.md, "Nop sleds"). A function
// that is not selected keeps its nops and costs nothing while the program is recorded.
#pragma once

#include <link.h>

#include <cstdint>

namespace callmon::rt {

// Decides, at patch time, whether the function starting at `function_start` (a run-time
// address, after the load bias) is recorded. Called once per sled site, from the patcher
// only (start-up constructor or after a dlopen), never from a hook: it may take its time
// but must not allocate through the program's malloc or take locks the loader holds.
//
// The record-time include / exclude filters (filter_select.hpp) decide: every function is
// selected when none is given. sled_select_module() must have run for the module first.
bool sled_select(uintptr_t function_start);

// Before the module's sites are selected: asks the filter service (callmon record) for the
// module's selection now, since the patcher runs before the process set-up's own scan (which
// then finds the module known).
void sled_select_module(const dl_phdr_info* info);

}  // namespace callmon::rt
