// `callmon record -p PID`: records a running program between an attach and a detach
// (docs/record.md, "Attaching to a running program"; design in docs/patching.md).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace callmon::tools {

struct AttachRequest {
  pid_t pid = 0;
  double duration_s = 0;   // 0: until Ctrl-C (SIGINT or SIGTERM to callmon)
  std::string dir;         // absolute, prepared (empty, ours)
  std::string options;     // "CALLMON_X=value\n" lines for the runtime (CALLMON_DIR added)
  std::string runtime;     // libcallmon.so
  bool scheduler = true;   // record the threads' context switches (session.sched)
};

// Attaches, waits for the duration, Ctrl-C or the program's exit, detaches, writes
// session.json and prints one line on what was recorded. Returns callmon's exit status
// (0, or 1 with a one-line error).
int run_record_attach(const AttachRequest& request);

}  // namespace callmon::tools
