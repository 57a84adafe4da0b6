// Why the kernel refused to let callmon ptrace a process, in words the user can act on
// (docs/security.md, "Attaching"). callmon has no privileges of its own: it can attach to
// exactly the processes the invoking user could attach to with gdb or strace, and when the
// kernel says no this explains which rule said it, naming kernel.yama.ptrace_scope.
#pragma once

#include <sys/types.h>

#include <string>

namespace callmon::monitor {

// The explanation of PTRACE_SEIZE failing on `pid` with `err` (an errno), for an error
// message that starts "not permitted to ptrace process PID: ". Reads /proc/PID/status
// (owner, tracer), /proc/sys/kernel/yama/ptrace_scope and callmon's own capabilities; never
// fails (what it cannot read it leaves out).
std::string ptrace_refusal(pid_t pid, int err);

}  // namespace callmon::monitor
