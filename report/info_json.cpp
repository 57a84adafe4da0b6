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
  if (c.libcall_outer_ns >= 0) {
    j["libcall_outer_ns"] = c.libcall_outer_ns;
    j["libcall_inner_ns"] = c.libcall_inner_ns;
  }
  return j;
}

// Where the records' bytes go (format/record_census.hpp): forms with at least one record.
json census_json(const format::RecordCensus& c, uint64_t calls) {
  json forms = json::array();
  for (format::RecordForm i : format::kCensusOrder) {
    const format::RecordCensus::Form& f = c.forms[i];
    if (f.records == 0) continue;
    forms.push_back(json{{"form", format::record_form_key(i)},
                         {"records", f.records},
                         {"bytes", f.bytes},
                         {"address_bytes", f.addr_bytes}});
  }
  const uint64_t bytes = c.bytes();
  return json{{"bytes", bytes},
              {"per_call", calls ? json(static_cast<double>(bytes) / static_cast<double>(calls))
                                 : json(nullptr)},
              {"forms", std::move(forms)}};
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
  if (s && s->machine) root["machine"] = format::machine_json(*s->machine);
  if (s && s->usage) root["usage"] = format::usage_json(*s->usage);
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
                             {"stopped", t.stopped},
                             {"record_bytes", census_json(t.census, t.calls)}});
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
    json pj{{"key", p.key},
            {"pid", p.pid},
            {"ppid", p.ppid},
            {"parent", p.parent.empty() ? json(nullptr) : json(p.parent)},
            {"exe", p.exe},
            {"exec", opt(p.exec)},
            {"probe_cost", p.probe_cost ? probe_cost_json(*p.probe_cost)
                                        : json(nullptr)},
            {"threads", std::move(threads)}};
    if (p.libcall_slots >= 0) {  // library calls were on (docs/patching.md)
      pj["libcall_slots"] = p.libcall_slots;
      pj["libcall_refused"] = p.libcall_refused;
    }
    if (p.xray_functions >= 0) {  // an XRay build (docs/modes.md)
      pj["xray_functions"] = p.xray_functions;
      pj["xray_refused"] = p.xray_refused;
    }
    if (p.pg_trampolines >= 0) {  // a -pg (mcount) build (docs/modes.md)
      pj["pg_trampolines"] = p.pg_trampolines;
      pj["pg_left"] = p.pg_left;
    }
    // Only when the program carries its own unwinder (docs/reliability.md).
    if (!p.own_unwinder_left.empty()) pj["own_unwinder_left"] = p.own_unwinder_left;
    if (p.sandboxed_ns) pj["sandboxed"] = {{"ns", *p.sandboxed_ns}, {"kind", p.sandbox}};
    // Only when the program dlmopen'ed an instrumented module: other files stay as they were.
    if (!p.dlmopen_modules.empty()) pj["dlmopen_modules"] = p.dlmopen_modules;
    if (!p.dlmopen_recorded.empty()) pj["dlmopen_recorded"] = p.dlmopen_recorded;
    // Only with --patch: the files of other recordings stay as they were.
    if (!patching.empty()) pj["patching"] = std::move(patching);
    procs.push_back(std::move(pj));
  }
  root["processes"] = std::move(procs);
  root["events"] = info.events;
  root["calls"] = info.calls;
  root["record_bytes"] = census_json(info.census, info.calls);
  root["duration_ns"] = ns_int(info.duration_ns);
  root["problems"] = info.problems;
  return root.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace callmon::report
