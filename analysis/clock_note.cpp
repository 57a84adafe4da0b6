// short_function_limit_ns(), short_function_text() (clock_note.hpp).
#include "analysis/clock_note.hpp"

#include <fmt/format.h>

namespace callmon::analysis {

std::optional<double> short_function_limit_ns(const format::Recording& rec, bool compensated,
                                              std::string& clock) {
  if (!compensated) return std::nullopt;
  std::optional<double> limit;
  for (const format::ProcessRecording& p : rec.processes) {
    const format::ProcessMeta& m = p.meta;
    if (m.clock_kind == "tsc-fenced" || !m.probe_cost || m.ticks_per_second <= 0) continue;
    double outer_ns = m.probe_cost->outer_ticks * 1e9 / m.ticks_per_second;
    if (outer_ns > 0 && (!limit || outer_ns > *limit)) {
      limit = outer_ns;
      clock = m.clock_kind;
    }
  }
  return limit;
}

std::string short_function_text(double limit_ns, const std::string& clock,
                                const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < 3; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 3) list += fmt::format(" and {} more", names.size() - 3);
  return fmt::format(
      "recorded with the {} clock: self times under {:.0f} ns per call ({}) read low, part "
      "of such short work runs beside the probes; `callmon record --clock=tsc-fenced` times "
      "them closely",
      clock, limit_ns, list);
}

}  // namespace callmon::analysis
