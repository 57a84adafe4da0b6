// Whose a recording made by attaching is: the runtime loaded into the process writes its
// files as the process's user, so when root attaches to another user's process (a service
// running as its own user) the recording directory must be that user's for the runtime to
// write into it (docs/security.md, "Attaching").
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "format/result.hpp"

namespace callmon::tools {

// The user and group process `pid` creates files as (its file-system IDs, from
// /proc/PID/status), or nothing when they cannot be read (it is gone).
struct FileOwner {
  uid_t uid = 0;
  gid_t gid = 0;
};
std::optional<FileOwner> process_file_owner(pid_t pid);

// Gives `dir` (a recording directory prepare_dir just made, ours and private) to the user
// process `pid` writes files as, when that is another user and we are root; the directory
// keeps its mode, so it stays as private as before, to that user (and root). Nothing to do
// otherwise: the same user writes it, or ptrace refuses the attach and says why. What root
// then writes into it itself is written without following links (format/session.cpp,
// sched_recorder.cpp), so the user cannot aim root's writes elsewhere. Errors: the chown
// failed.
Status give_dir_to_process(const std::string& dir, pid_t pid);

}  // namespace callmon::tools
