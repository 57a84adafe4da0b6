// Gathering of `callmon info` data (recording_info.hpp).
#include "analysis/recording_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "analysis/call_walk.hpp"
#include "analysis/compensation.hpp"
#include "analysis/live_process.hpp"
#include "analysis/sched_note.hpp"
#include "analysis/unrecorded_modules.hpp"

namespace callmon::analysis {
namespace {

// Counts what info needs and nothing else.
struct InfoSink {
  uint64_t calls = 0;
  uint64_t lost = 0;
  format::Event::Type last_close = format::Event::kEnd;  // last END or EXEC seen
  uint64_t calibrations = 0;
  uint64_t calib_min = UINT64_MAX, calib_max = 0;  // outer cost, ticks x kCalibScale

  uint32_t on_enter(uint64_t, uint64_t, uint32_t, bool) { return 0; }
  void on_call(const FinishedCall& c) {
    if (!c.inherited) ++calls;
  }
  void on_special(const format::Event& ev, uint32_t) {
    if (ev.type == format::Event::kLost) lost += ev.count;
    if (ev.type == format::Event::kEnd || ev.type == format::Event::kExec) last_close = ev.type;
    if (ev.type == format::Event::kCalib) {
      ++calibrations;
      calib_min = std::min(calib_min, ev.addr);
      calib_max = std::max(calib_max, ev.addr);
    }
  }
};

std::string thread_status(const CallWalker<InfoSink>& walker, const InfoSink& sink,
                          bool normal_end) {
  if (!walker.ended_cleanly()) return normal_end ? "ended" : "cut";
  if (sink.last_close == format::Event::kExec) return "exec";
  return walker.left_open() > 0 ? "unfinished" : "finished";
}

}  // namespace

bool run_ended_normally(const format::Recording& rec) {
  // Attached and detached (callmon record -p): every thread of the attached process has its
  // END; a fork child's thread without one ended as the program's children end (_exit).
  if (rec.session && rec.session->attached_detached.value_or(false)) return true;
  return rec.session && rec.session->exit_status && !rec.session->exit_signal;
}

Result<RecordingInfo> gather_info(const format::Recording& rec, const ProgressFn& progress) {
  RecordingInfo info;
  info.dir = rec.dir;
  info.session = rec.session;
  info.scheduler = scheduler_status(rec);
  const bool normal_end = run_ended_normally(rec);
  for (const std::string& w : rec.warnings) info.warnings.push_back(w);

  std::vector<std::string> paths;
  for (const auto& p : rec.processes)
    for (const auto& t : p.threads) paths.push_back(t.path);
  uint64_t total_bytes = progress ? total_file_size(paths) : 0;
  uint64_t done_bytes = 0;
  double min_start = std::numeric_limits<double>::infinity();
  double max_end = -min_start;

  for (const format::ProcessRecording& proc : rec.processes) {
    const format::ProcessMeta& meta = proc.meta;
    ProcessInfo pi;
    // A daemon that outlived `callmon record` still writes its files: they read as cut.
    const bool live = still_recording(rec.dir, meta);
    if (live)
      info.problems.push_back(fmt::format(
          "process {} (pid {}) is still running and recording: what is read now is not its "
          "whole recording (read it again once it has ended)", meta.key, meta.pid));
    pi.key = meta.key;
    pi.pid = meta.pid;
    pi.ppid = meta.ppid;
    pi.parent = meta.parent_key;
    pi.exe = meta.exe;
    if (meta.exec) pi.exec = meta.exec->second;
    pi.clock_kind = meta.clock_kind;
    pi.ticks_per_second = meta.ticks_per_second;
    pi.calibrations = meta.calibrations.size();
    pi.libcall_slots = meta.libcall_slots;
    pi.libcall_refused = meta.libcall_refused;
    pi.xray_functions = meta.xray_functions;
    pi.xray_refused = meta.xray_refused;
    pi.pg_trampolines = meta.pg_trampolines;
    pi.pg_left = meta.pg_left;
    pi.own_unwinder_left = meta.own_unwinder_left;
    if (meta.sandboxed_ticks) pi.sandboxed_ns = meta.ticks_to_ns(*meta.sandboxed_ticks);
    pi.sandbox = meta.sandbox;
    pi.patching = meta.patched_modules;
    pi.dlmopen_modules = meta.dlmopen_modules;
    pi.dlmopen_recorded = meta.dlmopen_recorded;
    if (std::optional<format::ProbeCost> c = process_probe_cost(proc)) {
      size_t measured = std::count_if(meta.calibrations.begin(), meta.calibrations.end(),
                                      [](const format::ProbeCost& k) { return k.measured(); });
      pi.probe_cost = ProbeCostInfo{meta.ticks_to_ns(c->inner_ticks),
                                    meta.ticks_to_ns(c->outer_ticks), measured};
      if (std::optional<WalkCost> w = process_walk_cost(proc)) {
        if (c->hidden_ticks >= 0) pi.probe_cost->hidden_ns = meta.ticks_to_ns(w->hidden);
        if (c->taken_back_ticks >= 0)
          pi.probe_cost->taken_back_ns = meta.ticks_to_ns(w->taken_back);
        if (w->libcall_extra_outer != 0 || w->libcall_extra_inner != 0) {
          pi.probe_cost->libcall_outer_ns = meta.ticks_to_ns(w->outer + w->libcall_extra_outer);
          pi.probe_cost->libcall_inner_ns = meta.ticks_to_ns(w->inner + w->libcall_extra_inner);
        }
      }
    }
    format::ModuleLifetimes lifetimes(meta.modules);
    for (const format::ThreadFile& tf : proc.threads) {
      auto opened = format::ThreadReader::open(tf.path);
      if (!opened) return Error{opened.error()};
      format::ThreadReader& reader = opened.value();
      reader.use_module_lifetimes(lifetimes);
      InfoSink sink;
      CallWalker<InfoSink> walker(sink);
      walker.set_offcpu(&tf.offcpu);
      ThreadInfo ti;
      // walk_thread's loop, with the bytes census of each record.
      format::Event ev;
      uint64_t before = 0;
      while (reader.next(ev)) {
        ti.census.add(ev, reader.bytes_read() - before);
        before = reader.bytes_read();
        walker.feed(ev);
        if ((++ti.events & 0xFFFFF) == 0 && progress) progress(done_bytes + before, total_bytes);
      }
      walker.finish();
      done_bytes += reader.file_size();
      const format::ThreadFileHeader& h = reader.header();
      ti.tid = tf.tid;
      ti.name.assign(h.thread_name, strnlen(h.thread_name, sizeof(h.thread_name)));
      ti.file = base_name(tf.path);
      ti.calls = sink.calls;
      if (walker.started()) {
        ti.first_ns = meta.ticks_to_ns(walker.first_ticks());
        ti.last_ns = meta.ticks_to_ns(walker.last_ticks());
        ti.duration_ns = meta.ticks_to_ns(walker.last_ticks() - walker.first_ticks());
        min_start = std::min(min_start, ti.first_ns);
        max_end = std::max(max_end, ti.last_ns);
      }
      ti.status = thread_status(walker, sink, normal_end);
      ti.left_open = walker.left_open();
      ti.bytes = reader.file_size();
      ti.event_bytes = reader.bytes_read();
      ti.paused_ns = meta.ticks_to_ns(walker.paused_ticks());
      ti.burst_ns = meta.ticks_to_ns(h.burst_ticks);
      ti.preempted_ns = meta.ticks_to_ns(walker.preempted_ticks());
      ti.blocked_ns = meta.ticks_to_ns(walker.blocked_ticks());
      ti.preemptions = walker.preemptions();
      ti.blocks = walker.blocks();
      ti.calibrations = sink.calibrations;
      ti.filtered_calls = walker.filtered_calls();
      ti.taken_back_calls = walker.taken_back_calls();
      ti.capture_ns = meta.ticks_to_ns(walker.capture_ticks());
      if (sink.calibrations) {
        ti.calibration_min_ns = meta.ticks_to_ns(static_cast<double>(sink.calib_min) / format::kCalibScale);
        ti.calibration_max_ns = meta.ticks_to_ns(static_cast<double>(sink.calib_max) / format::kCalibScale);
      }
      ti.bursts = h.burst_count;
      ti.unmatched_exits = h.unmatched_exits + walker.unmatched_exits();
      ti.lost_events = std::max<uint64_t>(h.lost_events, sink.lost);
      ti.stopped = (h.flags & format::kFlagStopped) != 0;

      if (ti.status == "cut") {
        info.problems.push_back(fmt::format(
            "thread {} of process {} was cut with {} call(s) open ({})", ti.tid, pi.key,
            ti.left_open,
            live ? std::string("its process is still running")
            : meta.sandboxed_ticks
                ? std::string("its process installed a seccomp filter, after which callmon "
                              "writes nothing more")
            : rec.session && rec.session->exit_signal
                ? fmt::format("the program was killed by signal {}", *rec.session->exit_signal)
                : std::string("the recording did not finish: killed, or callmon was")));
      }
      if (ti.unmatched_exits > 0) {
        info.problems.push_back(fmt::format("{}: {} unmatched exit(s)", ti.file,
                                            ti.unmatched_exits));
      }
      // Bytes that are not the records they look like (damage that decodes as records of
      // another kind) give times of minutes or hours, which no thread runs on after its
      // process finished (the `exit` clock sync, at exit() or the detach; the other
      // threads may run on a moment, never a second).
      if (meta.exit && walker.started() &&
          walker.last_ticks() > meta.exit->ticks + meta.ticks_per_second)
        info.problems.push_back(fmt::format(
            "{}: records timed {:.3f} s after its process finished: some were decoded "
            "wrong (damaged records)",
            ti.file, meta.ticks_to_ns(walker.last_ticks() - meta.exit->ticks) * 1e-9));
      if (ti.lost_events > 0 && !ti.stopped) {  // a stopped file's sentence says it
        info.problems.push_back(fmt::format("{}: {} event(s) lost while recording", ti.file,
                                            ti.lost_events));
      }
      for (const std::string& m : damage_messages(reader, ti.calls)) {
        info.problems.push_back(m);
        info.warnings.push_back(m);
      }
      info.events += ti.events;
      info.calls += ti.calls;
      info.census.merge(ti.census);
      pi.threads.push_back(std::move(ti));
    }
    for (const auto& [tid, why] : meta.untraced_threads)
      info.problems.push_back(fmt::format("thread {} of process {} was not recorded ({})", tid,
                                          pi.key, why));
    info.processes.push_back(std::move(pi));
  }
  if (max_end >= min_start) info.duration_ns = max_end - min_start;
  for (const std::string& w : rec.warnings) info.problems.push_back(w);
  if (std::string s = dlmopen_sentence(dlmopen_modules(rec)); !s.empty())
    info.problems.push_back(s);
  return info;
}

}  // namespace callmon::analysis
