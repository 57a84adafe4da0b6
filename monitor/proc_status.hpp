// A process's /proc/PID/status lines, for the code that looks at another process before
// tracing it or writing for it (ptrace_refusal, `callmon record -p`'s directory owner).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace callmon::monitor {

// The whitespace-separated fields of the "KEY:" line of /proc/PID/status ("Uid" gives the
// real, effective, saved and file-system user); empty when the process is gone, the file
// cannot be read or has no such line.
std::vector<std::string> proc_status_fields(pid_t pid, const std::string& key);

}  // namespace callmon::monitor
