// A recording directory as a whole: its session, its processes and their thread files.
// Opening validates the layout; reading each thread's events is left to ThreadReader.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "format/process_meta.hpp"
#include "format/result.hpp"
#include "format/sched_file.hpp"
#include "format/session.hpp"

namespace callmon::format {

struct ThreadFile {
  std::string path;
  uint32_t tid = 0;
  // When the thread was off the CPU, in its process's ticks, by start (session.sched;
  // empty without one). May extend before and after the thread's records.
  std::vector<OffCpu> offcpu;
};

struct ProcessRecording {
  ProcessMeta meta;
  // In start order: by the start time in each file's header, then tid and restart number.
  std::vector<ThreadFile> threads;
  // The fenced entry hooks' first stretch, summed over the thread files' headers: the ticks
  // checked and the host bursts caught there (ThreadFileHeader). Their ratio is the host's
  // burst rate, which compensation applies where no check looks (analysis/compensation.hpp).
  uint64_t entry_checked_ticks = 0;
  uint64_t entry_burst_ticks = 0;
};

struct Recording {
  std::string dir;
  std::optional<Session> session;        // absent when the runtime was linked in directly
  // The scheduler file's status and counts (its intervals are in the ThreadFiles); absent
  // when the recording has none or it could not be read (then a warning says why).
  std::optional<SchedData> sched;
  // In start order: by the time of each meta file's first `sync` line, then pid and
  // generation. Never by id alone: pids wrap around.
  std::vector<ProcessRecording> processes;
  std::vector<std::string> warnings;     // files that were skipped and why
};

// Opens DIR. Errors: not a directory, no callmon files in it, a corrupt meta file.
Result<Recording> open_recording(const std::string& dir);

}  // namespace callmon::format
