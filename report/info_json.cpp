// JSON rendering of `callmon info` (info_render.hpp). Keys keep the documented order.
#include <nlohmann/json.hpp>

#include <cmath>

#include "report/info_render.hpp"
#include "report/units.hpp"

namespace callmon::report {
namespace {

using json = nlohmann::ordered_json;

template <class T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// A process's probe costs; the unrecorded calls' only where a filter had them measured.
json probe_cost_json(const analysis::ProbeCostInfo& c) {
  json j{{"inner_ns", c.inner_ns}, {"outer_ns", c.outer_ns}, {"calibrations", c.calibrations}};
  if (c.hidden_ns >= 0) j["filtered_call_ns"] = c.hidden_ns;
  if (c.taken_back_ns >= 0) j["taken_back_call_ns"] = c.taken_back_ns;
  return j;
}

}  // namespace

std::string render_info_json(const analysis::RecordingInfo& info) {
  json root{{"recording", info.dir}};
  const auto& s = info.session;
  root["command"] = s ? json(s->command) : json(nullptr);
  root["exit_status"] = s ? opt(s->exit_status) : json(nullptr);
  root["exit_signal"] = s ? opt(s->exit_signal) : json(nullptr);
  root["start_unix_ns"] = s ? json(s->start_unix_ns) : json(nullptr);
  root["end_unix_ns"] = s ? opt(s->end_unix_ns) : json(nullptr);
  // Machine and run facts (recordings made before callmon kept them: null).
  root["machine"] = nullptr;
  root["usage"] = nullptr;
  if (s && s->machine) {
    const format::MachineFacts& m = *s->machine;
    root["machine"] = json{{"cpu_model", m.cpu_model},
                           {"cpus_online", m.cpus_online},
                           {"cpus_total", m.cpus_total},
                           {"mem_total_kib", m.mem_total_kib},
                           {"mem_available_kib", m.mem_available_kib},
                           {"load_average", {m.load[0], m.load[1], m.load[2]}},
                           {"kernel", m.kernel},
                           {"hostname", m.hostname}};
  }
  if (s && s->usage) {
    const format::RunUsage& u = *s->usage;
    root["usage"] = json{{"user_s", u.user_s},
                         {"system_s", u.system_s},
                         {"max_rss_kib", u.max_rss_kib},
                         {"minor_faults", u.minor_faults},
                         {"major_faults", u.major_faults},
                         {"voluntary_switches", u.voluntary_switches},
                         {"involuntary_switches", u.involuntary_switches}};
  }
  if (!info.processes.empty()) {
    root["clock"] = json{{"kind", info.processes.front().clock_kind},
                         {"ticks_per_second", info.processes.front().ticks_per_second}};
  } else {
    root["clock"] = nullptr;
  }
  root["scheduler"] = info.scheduler;
  json procs = json::array();
  for (const analysis::ProcessInfo& p : info.processes) {
    json threads = json::array();
    for (const analysis::ThreadInfo& t : p.threads) {
      threads.push_back(json{{"tid", t.tid},
                             {"name", t.name},
                             {"file", t.file},
                             {"events", t.events},
                             {"calls", t.calls},
                             {"status", t.status},
                             {"open_at_end", t.left_open},
                             {"bytes", t.bytes},
                             {"event_bytes", t.event_bytes},
                             {"paused_ns", ns_int(t.paused_ns)},
                             {"host_burst_ns", ns_int(t.burst_ns)},
                             {"host_bursts", t.bursts},
                             {"preempted_ns", ns_int(t.preempted_ns)},
                             {"preemptions", t.preemptions},
                             {"blocked_ns", ns_int(t.blocked_ns)},
                             {"blocks", t.blocks},
                             {"calibrations", t.calibrations},
                             {"filtered_calls", t.filtered_calls},
                             {"taken_back_calls", t.taken_back_calls},
                             {"capture_ns", ns_int(t.capture_ns)},
                             {"first_ns", ns_int(t.first_ns)},
                             {"last_ns", ns_int(t.last_ns)},
                             {"duration_ns", ns_int(t.duration_ns)},
                             {"unmatched_exits", t.unmatched_exits},
                             {"lost_events", t.lost_events},
                             {"stopped", t.stopped}});
    }
    json patching = json::array();
    for (const format::PatchedModule& m : p.patching) {
      json refused = json::array();
      for (const format::PatchRefusal& r : m.refusals)
        refused.push_back(json{{"address", r.address}, {"name", r.name}, {"reason", r.reason}});
      patching.push_back(json{{"module", m.path},
                              {"patched", m.patched},
                              {"refused", m.refused},
                              {"note", m.note.empty() ? json(nullptr) : json(m.note)},
                              {"refused_functions", std::move(refused)}});
    }
    procs.push_back(json{{"key", p.key},
                         {"pid", p.pid},
                         {"ppid", p.ppid},
                         {"parent", p.parent.empty() ? json(nullptr) : json(p.parent)},
                         {"exe", p.exe},
                         {"exec", opt(p.exec)},
                         {"probe_cost", p.probe_cost ? probe_cost_json(*p.probe_cost)
                                                     : json(nullptr)},
                         {"threads", std::move(threads)}});
    // Only with --patch: the files of other recordings stay as they were.
    if (!patching.empty()) procs.back()["patching"] = std::move(patching);
  }
  root["processes"] = std::move(procs);
  root["events"] = info.events;
  root["calls"] = info.calls;
  root["duration_ns"] = ns_int(info.duration_ns);
  root["problems"] = info.problems;
  return root.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace callmon::report
