// JSON rendering of the flat profile (profile_render.hpp). Keys keep the documented order.
#include <nlohmann/json.hpp>

#include <cmath>

#include "analysis/figure_range.hpp"
#include "analysis/cxx_names.hpp"
#include "report/profile_render.hpp"
#include "report/units.hpp"

namespace callmon::report {
namespace {

using json = nlohmann::ordered_json;

json rows_json(const std::vector<analysis::FunctionRow>& rows) {
  json arr = json::array();
  for (const analysis::FunctionRow& r : rows) {
    json j{{"name", r.name},
           {"short_name", analysis::short_name(r.name)},
           {"module", r.module},
           {"file", r.file},
           {"line", r.line},
           {"calls", r.calls},
           {"total_ns", ns_int(r.total_ns)},
           {"self_ns", ns_int(r.self_ns)},
           {"avg_ns", ns_int(r.avg_ns())},
           {"min_ns", ns_int(r.min_ns)},
           {"max_ns", ns_int(r.max_ns)},
           {"offcpu_ns", ns_int(r.offcpu_ns)},
           {"preempted_ns", ns_int(r.preempted_ns)}};
    // The ranges of the figures that are uncertain (analysis/figure_range.hpp).
    if (analysis::is_uncertain(r.total_lo_ns, r.total_hi_ns))
      j["total_ns_range"] = json::array({ns_int(r.total_lo_ns), ns_int(r.total_hi_ns)});
    if (analysis::is_uncertain(r.self_lo_ns, r.self_hi_ns))
      j["self_ns_range"] = json::array({ns_int(r.self_lo_ns), ns_int(r.self_hi_ns)});
    if (analysis::is_uncertain(r.min_lo_ns, r.min_hi_ns))
      j["min_ns_range"] = json::array({ns_int(r.min_lo_ns), ns_int(r.min_hi_ns)});
    if (analysis::is_uncertain(r.max_lo_ns, r.max_hi_ns))
      j["max_ns_range"] = json::array({ns_int(r.max_lo_ns), ns_int(r.max_hi_ns)});
    if (r.clocked_calls) j["clocked_calls"] = r.clocked_calls;
    arr.push_back(std::move(j));
  }
  return arr;
}

}  // namespace

std::string render_profile_json(const analysis::Profile& p, const ProfileRenderOptions& o) {
  json root{{"recording", p.recording},
            {"total_calls", p.total_calls},
            {"processes", p.processes},
            {"threads", p.threads},
            {"functions", rows_json(ordered_rows(p.functions, o))}};
  if (p.group_by != analysis::GroupBy::kNone) {
    json groups = json::array();
    for (const analysis::ProfileGroup& g : p.groups) {
      json jg{{"process", g.process_key}, {"pid", g.pid}};
      if (p.group_by == analysis::GroupBy::kThread) {
        jg["tid"] = g.tid;
        jg["thread_name"] = g.thread_name;
      }
      jg["functions"] = rows_json(ordered_rows(g.functions, o));
      groups.push_back(std::move(jg));
    }
    root["groups"] = std::move(groups);
  }
  // Invalid UTF-8 in a symbol name must not abort the report: replace it.
  return root.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace callmon::report
