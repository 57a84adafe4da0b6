// Programs a recorded one starts that callmon cannot follow: a statically linked program has
// no dynamic loader, which is what loads callmon's runtime (LD_PRELOAD), so it runs
// unrecorded. `callmon record` refuses such a program when it is the one given; one started
// further down (a shell running it) went unrecorded without a word.
#pragma once

namespace callmon::rt {

// Says once per process on stderr when `file`, about to be exec'd or spawned by a process
// that passes callmon's variables on, is a statically linked ELF program. `search`: a
// name without '/' is looked up on PATH (execvp, posix_spawnp). Async-signal-safe and safe
// in a vfork child (open, pread, close; errno kept).
void note_static_program(const char* file, bool search);

}  // namespace callmon::rt
