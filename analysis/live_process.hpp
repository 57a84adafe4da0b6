// Whether a process of a recording is still running and writing it: a daemon that outlived
// `callmon record` (double fork, setsid) goes on recording after callmon returned, and its
// files read as cut until it ends.
#pragma once

#include <string>

#include "format/process_meta.hpp"

namespace callmon::analysis {

// True when `meta`'s process has no `exit` line yet and a live process of its pid maps an
// event file of it from recording directory `dir` (/proc/PID/maps: a pid reused by another
// program, or a recording copied elsewhere, maps nothing of it).
bool still_recording(const std::string& dir, const format::ProcessMeta& meta);

}  // namespace callmon::analysis
