// Text rendering of `callmon info` (info_render.hpp).
#include <fmt/format.h>

#include <cmath>
#include <ctime>

#include "callmon/format/own_unwinder.hpp"
#include "report/info_render.hpp"
#include "report/units.hpp"

namespace callmon::report {

std::string format_unix_ns(int64_t ns) {
  time_t secs = static_cast<time_t>(ns / 1000000000);
  int64_t ms = (ns % 1000000000) / 1000000;
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("{}.{:03d} UTC", buf, ms);
}

namespace {

std::string join_command(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\"'\\$") == std::string::npos;
    out += plain ? a : "'" + a + "'";
  }
  return out;
}

std::string exit_text(const format::Session& s) {
  if (s.exit_signal) return fmt::format("killed by signal {} (status {})", *s.exit_signal,
                                        s.exit_status.value_or(128 + *s.exit_signal));
  if (s.exit_status) return fmt::format("status {}", *s.exit_status);
  if (s.attached_detached)
    return *s.attached_detached
               ? "none: attached to the running program (callmon record -p), detached while it ran on"
               : "not known: the program ended while attached (callmon record -p)";
  return "unknown (the recording did not finish)";
}

// The earliest first-event time of all threads: thread times are shown relative to it.
double recording_start(const analysis::RecordingInfo& info) {
  double start = -1;
  for (const auto& p : info.processes)
    for (const auto& t : p.threads)
      if (t.events > 0 && (start < 0 || t.first_ns < start)) start = t.first_ns;
  return start < 0 ? 0 : start;
}

// "7.76 GiB", "512 MiB", "900 KiB" from KiB.
std::string human_kib(uint64_t kib) {
  if (kib >= 1024 * 1024) return fmt::format("{:.2f} GiB", static_cast<double>(kib) / (1024 * 1024));
  if (kib >= 1024) return fmt::format("{:.1f} MiB", static_cast<double>(kib) / 1024);
  return fmt::format("{} KiB", kib);
}

// The machine and run lines, as uftrace's info gives them; nothing for recordings made
// before callmon kept these facts.
std::string machine_lines(const format::Session& s) {
  std::string out;
  if (s.machine) {
    const format::MachineFacts& m = *s.machine;
    out += fmt::format("machine:   {}, {} CPU{} ({} online), {} memory ({} available)\n",
                       m.cpu_model.empty() ? "unknown CPU" : m.cpu_model, m.cpus_total,
                       m.cpus_total == 1 ? "" : "s", m.cpus_online, human_kib(m.mem_total_kib),
                       human_kib(m.mem_available_kib));
    out += fmt::format("system:    {} on {}, load average {:.2f} {:.2f} {:.2f} at the start\n",
                       m.kernel.empty() ? "unknown kernel" : m.kernel,
                       m.hostname.empty() ? "unknown host" : m.hostname, m.load[0], m.load[1],
                       m.load[2]);
  }
  if (s.usage) {
    const format::RunUsage& u = *s.usage;
    out += fmt::format("usage:     max RSS {}, page faults {} minor + {} major, context "
                       "switches {} voluntary + {} involuntary, CPU {:.3f} s user + {:.3f} s "
                       "system\n",
                       human_kib(u.max_rss_kib), u.minor_faults, u.major_faults,
                       u.voluntary_switches, u.involuntary_switches, u.user_s, u.system_s);
  }
  return out;
}

std::string bytes_per_call(uint64_t bytes, uint64_t calls) {
  if (calls == 0) return "-";
  return fmt::format("{:.1f}", static_cast<double>(bytes) / static_cast<double>(calls));
}

// "bytes:" and a line per record form: where the records' bytes go, per call.
std::string census_lines(const format::RecordCensus& c, uint64_t calls) {
  const uint64_t bytes = c.bytes();
  if (bytes == 0 || calls == 0) return {};
  const double n = static_cast<double>(calls);
  std::string out = fmt::format("bytes:     {:.2f} per call ({} bytes of records), by record "
                                "form:\n",
                                static_cast<double>(bytes) / n, bytes);
  for (format::RecordForm i : format::kCensusOrder) {
    const format::RecordCensus::Form& f = c.forms[i];
    if (f.records == 0) continue;
    out += fmt::format("  {:<24} {:>6.2f} per call  {:>14} records, {:.2f} bytes each",
                       format::record_form_text(i),
                       static_cast<double>(f.bytes) / n, f.records,
                       static_cast<double>(f.bytes) / static_cast<double>(f.records));
    if (f.addr_bytes)
      out += fmt::format(" (address {:.2f})",
                         static_cast<double>(f.addr_bytes) / static_cast<double>(f.records));
    out += "\n";
  }
  return out;
}

}  // namespace

std::string render_info_text(const analysis::RecordingInfo& info) {
  std::string out = fmt::format("recording: {}\n", info.dir);
  if (info.session) {
    const format::Session& s = *info.session;
    out += fmt::format("command:   {}\n", join_command(s.command));
    out += fmt::format("exit:      {}\n", exit_text(s));
    out += fmt::format("start:     {}\n", format_unix_ns(s.start_unix_ns));
    out += fmt::format("end:       {}\n",
                       s.end_unix_ns ? format_unix_ns(*s.end_unix_ns) : "unknown");
    out += machine_lines(s);
  } else {
    out += "command:   unknown (no session.json)\n";
  }
  if (!info.processes.empty()) {
    const analysis::ProcessInfo& p = info.processes.front();
    out += fmt::format("clock:     {}, {:.0f} ticks per second\n", p.clock_kind,
                       p.ticks_per_second);
  }
  out += fmt::format("scheduler: {}\n", info.scheduler);
  out += fmt::format("processes: {}\n", info.processes.size());
  const double start = recording_start(info);
  for (const analysis::ProcessInfo& p : info.processes) {
    out += fmt::format("  process {} pid {} ppid {}{} exe {}\n", p.key, p.pid, p.ppid,
                       p.parent.empty() ? "" : " parent " + p.parent, p.exe);
    if (p.exec) out += fmt::format("    exec'd {}\n", *p.exec);
    if (p.probe_cost) {
      const char* source = "calibrated at start-up";
      if (p.probe_cost->calibrations > 1)
        source = "the cheaper of the calibrations at start-up and at exit";
      else if (p.calibrations > 1)
        source = "calibrated at exit, the start-up calibration failed";
      out += fmt::format("    recording cost {:.1f} ns per call, {:.1f} ns of it inside the call "
                         "({}; compensation takes it out)\n",
                         p.probe_cost->outer_ns, p.probe_cost->inner_ns, source);
      if (p.probe_cost->hidden_ns >= 0)
        out += fmt::format("    a call a filter keeps out still costs {:.1f} ns (its probes run; "
                           "compensation takes it out)\n",
                           p.probe_cost->hidden_ns);
      if (p.probe_cost->taken_back_ns >= 0)
        out += fmt::format("    a call --min-duration takes back costs {:.1f} ns (compensation "
                           "takes it out)\n",
                           p.probe_cost->taken_back_ns);
      if (p.probe_cost->libcall_outer_ns >= 0)
        out += fmt::format("    a library call costs {:.1f} ns, {:.1f} ns of it inside the call "
                           "(its own calibration; compensation takes it out)\n",
                           p.probe_cost->libcall_outer_ns, p.probe_cost->libcall_inner_ns);
    } else if (p.calibrations > 0)
      out += "    recording cost not measured (its calibration failed); times are not "
             "compensated for it\n";
    if (p.libcall_slots >= 0)
      out += fmt::format("    library calls: {} GOT slots redirected to probes, {} refused "
                         "(GLOB_DAT, unresolved; docs/patching.md)\n",
                         p.libcall_slots, p.libcall_refused);
    if (p.xray_functions >= 0)
      out += fmt::format("    XRay sleds: {} patched, {} sled(s) refused (docs/modes.md)\n",
                         count_of(static_cast<uint64_t>(p.xray_functions), "function", "functions"),
                         p.xray_refused);
    if (p.pg_trampolines >= 0)
      out += fmt::format("    -pg trampolines: {} entered through them, {} kept their call of "
                         "mcount (docs/modes.md)\n",
                         count_of(static_cast<uint64_t>(p.pg_trampolines), "function", "functions"),
                         p.pg_left);
    if (!p.own_unwinder_left.empty()) {
      std::string what;
      for (const std::string& w : p.own_unwinder_left)
        what += (what.empty() ? "" : ", ") + std::string(format::own_unwinder_phrase(w.c_str()));
      out += fmt::format("    own C++ unwinder (linked with -static-libgcc): not recorded: {} "
                         "(docs/reliability.md)\n", what);
    }
    for (const format::PatchedModule& m : p.patching) {
      out += fmt::format("    entry patching (--patch) of {}: {} patched, {} refused{}\n",
                         m.path, count_of(m.patched, "function", "functions"), m.refused,
                         m.note.empty() ? "" : "; " + m.note);
      for (const format::PatchRefusal& r : m.refusals)
        out += fmt::format("      refused {} (0x{:x}): {}\n", r.name, r.address, r.reason);
    }
    if (p.sandboxed_ns)
      out += fmt::format("    {} installed at +{}: callmon made no system call after it, so each "
                         "thread's recording ended as its file filled, and threads, processes "
                         "and programs it started after it were not recorded\n",
                         p.sandbox == "seccomp-strict" ? "seccomp strict mode" : "seccomp filter",
                         human_duration(*p.sandboxed_ns - start));
    for (const std::string& m : p.dlmopen_recorded)
      out += fmt::format("    loaded with dlmopen into another namespace, recorded once patched "
                         "after its load (its constructors' calls are not): {}\n", m);
    for (const analysis::ThreadInfo& t : p.threads) {
      out += fmt::format(
          "    thread {} \"{}\": {}, {}, {}, +{} to +{} (duration {}), {} bytes on disk, {} bytes/call\n",
          t.tid, t.name, count_of(t.events, "event", "events"), count_of(t.calls, "call", "calls"),
          (t.status == "ended" ? std::string("ended without exit() (_exit)") : t.status) +
              (t.stopped ? ", recording stopped early" : ""), human_duration(t.first_ns - start), human_duration(t.last_ns - start),
          human_duration(t.duration_ns), t.bytes, bytes_per_call(t.event_bytes, t.calls));
      if (t.paused_ns > t.burst_ns)
        out += fmt::format("      the recorder held it {} (growing its file; compensation takes it out)\n",
                           human_duration(t.paused_ns - t.burst_ns));
      if (t.bursts > 0)
        out += fmt::format("      the host took the CPU {} inside the probes, {} in all (compensation takes it out)\n",
                           count_of(t.bursts, "time", "times"), human_duration(t.burst_ns));
      if (t.preemptions > 0)
        out += fmt::format("      preempted {}, {} in all (other programs' time: compensation takes it out)\n",
                           count_of(t.preemptions, "time", "times"), human_duration(t.preempted_ns));
      if (t.blocks > 0)
        out += fmt::format("      blocked {}, {} in all (sleep, I/O, locks: kept in the times, shown as off-CPU)\n",
                           count_of(t.blocks, "time", "times"), human_duration(t.blocked_ns));
      if (t.filtered_calls + t.taken_back_calls > 0) {
        std::string what;
        if (t.filtered_calls)
          what = count_of(t.filtered_calls, "call", "calls") + " kept out by filters";
        if (t.taken_back_calls)
          what += (what.empty() ? "" : ", ") + count_of(t.taken_back_calls, "call", "calls") +
                  " taken back by --min-duration";
        out += "      unrecorded: " + what +
               " (their probes ran: compensation takes them out)\n";
      }
      if (t.capture_ns > 0)
        out += fmt::format("      capturing argument and return values took {} (compensation "
                           "takes it out)\n",
                           human_duration(t.capture_ns));
      if (t.calibrations > 0)
        out += fmt::format("      probes calibrated again {} in the run: {:.1f} to {:.1f} ns per call\n",
                           count_of(t.calibrations, "time", "times"), t.calibration_min_ns,
                           t.calibration_max_ns);
    }
  }
  out += fmt::format("totals:    {}, {}, duration {}\n", count_of(info.events, "event", "events"),
                     count_of(info.calls, "call", "calls"), human_duration(info.duration_ns));
  out += census_lines(info.census, info.calls);
  if (info.problems.empty()) {
    out += "problems:  none\n";
  } else {
    out += fmt::format("problems:  {}\n", info.problems.size());
    for (const std::string& p : info.problems) out += "  - " + p + "\n";
  }
  return out;
}

}  // namespace callmon::report
