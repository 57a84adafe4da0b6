// The threads of a process as /proc lists them (/proc/PID/task), and seizing them all, for
// the ptrace code that takes a whole running process (monitor's attach, `callmon record -p`).
#pragma once

#include <sys/types.h>

#include <functional>
#include <set>

namespace callmon::monitor {

// The thread ids listed now; empty if the process is gone or /proc cannot be read. A thread
// may start or end right after: callers list again until the set stops changing.
std::set<pid_t> list_tasks(pid_t pid);

// PTRACE_SEIZEs every thread of `pid` with `options`, listing the threads again until no new
// one shows up (threads can be created meanwhile; those a seized thread creates come by
// PTRACE_O_TRACECLONE, which `options` should hold). Calls seized(tid) for each thread
// taken, and refused(tid, errno) for each the kernel refused (ESRCH: it ended meanwhile, or
// the process is gone); refused returns false to stop there. Returns false if it did.
bool seize_threads(pid_t pid, long options, const std::function<void(pid_t)>& seized,
                   const std::function<bool(pid_t, int)>& refused);

}  // namespace callmon::monitor
