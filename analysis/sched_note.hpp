// What a recording says about scheduler time (session.sched, docs/runtime.md "Scheduler
// time"): the one line `info` shows, and the note `report` and `html` add when times may
// include the time threads waited for a CPU, and why.
#pragma once

#include <optional>
#include <string>

#include "format/recording.hpp"

namespace callmon::analysis {

// "recorded: 1 234 context switches on 2 CPUs", or what is missing and why (never empty).
std::string scheduler_status(const format::Recording& rec);

// The note for outputs when the times include scheduler time somewhere (not recorded,
// recorded only in part, switch records lost); none when every switch is known.
std::optional<std::string> scheduler_note(const format::Recording& rec);

}  // namespace callmon::analysis
