// The facts `callmon record` keeps in session.json about the machine (when the program
// starts) and about the run (when it has ended), for `callmon info` (format/session.hpp).
#pragma once

#include "format/session.hpp"

namespace callmon::tools {

// CPU model and count, memory, load average, kernel and host name, from /proc, sysconf,
// getloadavg and uname; a fact that cannot be read stays empty or 0.
format::MachineFacts machine_facts();

// getrusage(RUSAGE_CHILDREN): the program and the descendants it waited for. Call it after
// the program was waited for, with no other child of callmon's ever waited for.
format::RunUsage children_usage();

}  // namespace callmon::tools
