// Starting a program under one of callmon's own monitor libraries (callmon-trace.so,
// callmon-inject.so), the way `callmon run --monitor` starts a user's: libcallmon.so
// preloaded, the monitor named by CALLMON_MONITOR and its options in
// CALLMON_MONITOR_OPTIONS (KEY=VALUE lines, include/callmon/monitor.hpp).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "format/result.hpp"

namespace callmon::tools {

using MonitorOptions = std::vector<std::pair<std::string, std::string>>;

// The program's environment: preload_env(runtime) (program_launch.hpp) with
// CALLMON_MONITOR=<monitor> and CALLMON_MONITOR_OPTIONS. Errors: an option value holds a newline.
Result<std::vector<std::string>> monitor_env(const std::string& runtime,
                                             const std::string& monitor,
                                             const MonitorOptions& options);

// A copy of descriptor `fd` numbered 100 or above, inherited by the program (not
// close-on-exec), so the monitor can write to it even if the program reopens its own
// standard streams. Returns -1 on failure (errno set).
int inheritable_copy(int fd);

// Where a monitor writes, as a descriptor the program inherits (inheritable_copy): FILE,
// created or truncated and opened for appending, so the lines of a fork's child never
// overwrite the parent's; or, when `path` is empty, a copy of callmon's standard error.
// Errors name the file, or say that `what` could not be passed on.
// A file created gets `mode` (less the umask); one that existed keeps only the bits it shares
// with `mode` (format::create_file): private by default, 0644 with the command's --shared.
Result<int> inheritable_output(const std::string& path, const std::string& what,
                               mode_t mode = 0600);

}  // namespace callmon::tools
