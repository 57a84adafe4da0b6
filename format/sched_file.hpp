// A recording's scheduler file (`session.sched`, include/callmon/format/sched.hpp): reading
// it pairs each thread's switch-out with its next switch-in into off-CPU intervals, whose
// CLOCK_MONOTONIC times convert to a process's clock ticks; writing is for tests (`callmon
// record` writes its file as it drains the kernel's records, tools/callmon/sched_recorder).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "callmon/format/sched.hpp"
#include "format/result.hpp"

namespace callmon::format {

// One stretch a thread spent off the CPU: [start, end), in CLOCK_MONOTONIC ns as read, in
// ticks once converted (to_ticks). `preempted`: it was still runnable (the machine's time);
// otherwise it waited for something (sleep, I/O, a lock: the program's latency).
struct OffCpu {
  uint64_t start = 0;
  uint64_t end = 0;
  bool preempted = false;
};

struct SchedData {
  SchedStatus status = SchedStatus::kUnavailable;
  std::string reason;   // why not recorded (kUnavailable), or what is wrong with the file
  uint64_t lost = 0;    // switch records the kernel dropped (the header's count)
  uint32_t cpus = 0;
  // (TSC, CLOCK_MONOTONIC ns) pairs read by the recorder, by time.
  std::vector<std::pair<uint64_t, uint64_t>> syncs;
  // Per (pid, tid): the intervals by start. A switch-out whose switch-in is missing (the
  // thread ended, or the recording did) ends at UINT64_MAX.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<OffCpu>> threads;
  // The switches recorded, of each kind.
  uint64_t switches = 0;

  // The intervals of thread `tid` of process `pid` converted to ticks of a clock that reads
  // `tsc` ticks (a TSC clock, using `syncs`; ticks_per_second for extrapolation) or, when
  // !tsc, CLOCK_MONOTONIC ns; empty when there are none.
  std::vector<OffCpu> to_ticks(uint32_t pid, uint32_t tid, bool tsc,
                               double ticks_per_second) const;
};

// Reads `dir`/session.sched. nullopt when there is none (a recording made without
// `callmon record`, or older than the file). A file that cannot be read whole is an error;
// one cut short (callmon record was killed) is read up to the cut, status kRecording.
Result<std::optional<SchedData>> read_sched(const std::string& dir);

// Writes `dir`/session.sched with `status`, `reason` (kUnavailable) and `records`.
Status write_sched(const std::string& dir, SchedStatus status, const std::string& reason,
                   uint32_t cpus, const std::vector<SchedRecord>& records);

}  // namespace callmon::format
