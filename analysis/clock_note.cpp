// short_function_note() (clock_note.hpp).
#include "analysis/clock_note.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace callmon::analysis {

std::optional<std::string> short_function_note(const format::Recording& rec,
                                               const std::vector<FunctionRow>& rows,
                                               bool compensated) {
  if (!compensated) return std::nullopt;
  // The largest probe cost among the unordered-clock processes: a function shorter than
  // that is where the overlap shows.
  double limit_ns = 0;
  std::string clock;
  for (const format::ProcessRecording& p : rec.processes) {
    const format::ProcessMeta& m = p.meta;
    if (m.clock_kind == "tsc-fenced" || !m.probe_cost || m.ticks_per_second <= 0) continue;
    double outer_ns = m.probe_cost->outer_ticks * 1e9 / m.ticks_per_second;
    if (outer_ns > limit_ns) {
      limit_ns = outer_ns;
      clock = m.clock_kind;
    }
  }
  if (limit_ns <= 0) return std::nullopt;
  constexpr uint64_t kMinCalls = 100;  // fewer: too few calls for the average to mean much
  std::vector<std::pair<double, const std::string*>> short_ones;
  for (const FunctionRow& r : rows)
    if (r.calls >= kMinCalls && r.self_ns / static_cast<double>(r.calls) < limit_ns)
      short_ones.emplace_back(r.self_ns / static_cast<double>(r.calls), &r.name);
  if (short_ones.empty()) return std::nullopt;
  std::sort(short_ones.begin(), short_ones.end());
  std::string names;
  for (size_t i = 0; i < short_ones.size() && i < 3; ++i)
    names += (i ? ", " : "") + *short_ones[i].second;
  if (short_ones.size() > 3) names += fmt::format(" and {} more", short_ones.size() - 3);
  return fmt::format(
      "recorded with the {} clock: self times under {:.0f} ns per call ({}) read low, part "
      "of such short work runs beside the probes; `callmon record --clock=tsc-fenced` times "
      "them closely",
      clock, limit_ns, names);
}

}  // namespace callmon::analysis
