// Renders `callmon info` (analysis/recording_info.hpp) as text or JSON.
#pragma once

#include <string>

#include "analysis/recording_info.hpp"

namespace callmon::report {

// Text: one "label: value" line per session fact, an indented block per process and
// thread, totals, then the problems ("problems: none" when there are none).
std::string render_info_text(const analysis::RecordingInfo& info);

// JSON: {"recording", "command", "exit_status", "exit_signal", "start_unix_ns",
// "end_unix_ns", "clock": {"kind", "ticks_per_second"}, "processes": [{"key", "pid",
// "ppid", "parent", "exe", "exec", "threads": [{"tid", "name", "events", "calls",
// "status", "bytes", "duration_ns"}]}], "events", "calls", "duration_ns", "problems"}.
std::string render_info_json(const analysis::RecordingInfo& info);

// "2026-11-22 07:49:13.123 UTC" for nanoseconds since the Unix epoch.
std::string format_unix_ns(int64_t ns);

}  // namespace callmon::report
