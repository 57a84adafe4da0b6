// short_function_limit(), short_function_text() (clock_note.hpp).
#include "analysis/clock_note.hpp"

#include <fmt/format.h>

namespace callmon::analysis {

std::optional<ShortFunctionLimit> short_function_limit(const format::Recording& rec,
                                                       bool compensated) {
  if (!compensated) return std::nullopt;
  std::optional<ShortFunctionLimit> limit;
  for (const format::ProcessRecording& p : rec.processes) {
    const format::ProcessMeta& m = p.meta;
    std::optional<format::ProbeCost> cost = m.probe_cost();
    if (m.clock_kind == "tsc-fenced" || !cost) continue;
    double outer_ns = m.ticks_to_ns(cost->outer_ticks);
    if (outer_ns > 0 && (!limit || outer_ns > limit->ns))
      limit = ShortFunctionLimit{outer_ns, m.clock_kind};
  }
  return limit;
}

std::string short_function_text(const ShortFunctionLimit& limit,
                                const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < 3; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 3) list += fmt::format(" and {} more", names.size() - 3);
  return fmt::format(
      "recorded with the {} clock: self times under {:.0f} ns per call ({}) are uncertain, "
      "part of such short work runs beside the probes (see their ranges); `callmon record "
      "--clock=tsc-fenced` times them closely",
      limit.clock, limit.ns, list);
}

std::string clock_bound_text(const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size() && i < 3; ++i) list += (i ? ", " : "") + names[i];
  if (names.size() > 3) list += fmt::format(" and {} more", names.size() - 3);
  return fmt::format(
      "{} read a clock while they ran: a loop until a deadline lasts as long as the clock "
      "says, whatever its callees' probes cost, so their upper bounds reach their whole span",
      list);
}

}  // namespace callmon::analysis
