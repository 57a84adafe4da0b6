// The wait of the runtime's system() (interpose_spawn.cpp) for its command: a cancellation
// point, as glibc's is.
#pragma once

#include <sys/types.h>

namespace callmon::rt {

// Waits for `pid` (EINTR retried) into `*status`; 0, or -1 when waitpid fails. A thread
// cancelled while it waits kills the command (SIGKILL), reaps it and calls `done(arg)`
// (system()'s own end: the dispositions and the signal mask given back) before the
// cancellation goes on, as glibc's system() does; without it SIGINT stayed ignored in the
// whole process for good and the command ran on.
int system_wait(pid_t pid, int* status, void (*done)(void*), void* arg);

}  // namespace callmon::rt
