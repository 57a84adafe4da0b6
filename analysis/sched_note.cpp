// Scheduler status and note (sched_note.hpp).
#include "analysis/sched_note.hpp"

#include <fmt/format.h>

namespace callmon::analysis {
namespace {

constexpr const char* kIncluded = "times include the time threads waited for a CPU";

}  // namespace

std::string scheduler_status(const format::Recording& rec) {
  if (!rec.sched) {
    if (!rec.session) return "not recorded: the program was not started by callmon record";
    return "not recorded: the recording has no scheduler file (made with --no-scheduler, "
           "or by an older callmon)";
  }
  const format::SchedData& s = *rec.sched;
  if (s.status == format::SchedStatus::kUnavailable) return "not recorded: " + s.reason;
  std::string out = fmt::format("recorded: {} context switch{} on {} CPU{}", s.switches,
                                s.switches == 1 ? "" : "es", s.cpus, s.cpus == 1 ? "" : "s");
  if (s.status == format::SchedStatus::kRecording)
    out += ", up to where callmon record stopped (it did not finish)";
  if (s.lost > 0) out += fmt::format(", {} lost (the kernel's buffer was full)", s.lost);
  return out;
}

std::optional<std::string> scheduler_note(const format::Recording& rec) {
  if (!rec.sched || rec.sched->status == format::SchedStatus::kUnavailable)
    return std::string(kIncluded) + "; scheduler " + scheduler_status(rec);
  const format::SchedData& s = *rec.sched;
  if (s.status == format::SchedStatus::kRecording)
    return fmt::format("the scheduler's record stops before the program's end (callmon record "
                       "did not finish): later {}", kIncluded);
  if (s.lost > 0)
    return fmt::format("{} context switch record{} lost (the kernel's buffer was full): times "
                       "around them may include the time a thread waited for a CPU",
                       s.lost, s.lost == 1 ? " was" : "s were");
  return std::nullopt;
}

}  // namespace callmon::analysis
