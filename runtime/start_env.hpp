// The environment the process started with, read from the initial stack rather than from
// `environ`: the runtime may be set up before libc has set `environ` (a hook in
// .preinit_array code, an ifunc resolver, an earlier library's constructor), and its exec
// and spawn wrappers pass callmon's variables on even when the program has changed its own.
#pragma once

namespace callmon::rt {

// The start-up envp (NULL-terminated), or nullptr when it cannot be found. Async-signal-safe,
// no allocation, usable before libc's initialisation.
char* const* start_environ();

// The value of `name` in the start-up environment, or nullptr.
const char* start_env_get(const char* name);

}  // namespace callmon::rt
