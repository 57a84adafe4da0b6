// The threads of a process as /proc lists them (/proc/PID/task), for the ptrace code that
// seizes every thread of a process (monitor's attach, `callmon record -p`).
#pragma once

#include <sys/types.h>

#include <set>

namespace callmon::monitor {

// The thread ids listed now; empty if the process is gone or /proc cannot be read. A thread
// may start or end right after: callers list again until the set stops changing.
std::set<pid_t> list_tasks(pid_t pid);

}  // namespace callmon::monitor
