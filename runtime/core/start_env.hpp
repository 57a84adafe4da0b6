// callmon's variables as the process started with them, read from the initial stack rather
// than from `environ`: the runtime may be set up before libc has set `environ` (a hook in
// .preinit_array code, an ifunc resolver, an earlier library's constructor), and its exec
// and spawn wrappers pass callmon's variables on even after the program took them out of its
// own environment (child_env.hpp).
#pragma once

#include <cstddef>

namespace callmon::rt {

// Keeps the start-up environment's CALLMON_* and LD_PRELOAD entries (pointers: the strings
// stay where they are, while unsetenv moves the pointers of the initial array itself).
// Idempotent; called at the runtime's set-up and in its constructor, before the program can
// have changed its environment (unless an earlier library's constructor did). Async-signal-
// safe, no allocation, usable before libc's initialisation.
void start_env_capture();

// The kept entries ("NAME=value"), `*count` of them.
const char* const* start_env_entries(size_t* count);

// The auxiliary vector the kernel put on the initial stack after the environment's NULL:
// (type, value) pairs up to AT_NULL. Null when the stack's layout is not the expected one.
const unsigned long* start_auxv();

// The value of `name` among the kept entries, or nullptr.
const char* start_env_get(const char* name);

}  // namespace callmon::rt
