// What `callmon info` shows about a recording: the session, every process image and
// thread (events, calls, times, how the thread ended, file size), totals, and the problems
// found (cut threads, unmatched exits, lost events, damaged files). Gathered with one call
// walk per thread; nothing is stored per event.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/thread_problems.hpp"
#include "format/record_census.hpp"
#include "format/recording.hpp"
#include "format/result.hpp"

namespace callmon::analysis {

struct ThreadInfo {
  uint32_t tid = 0;
  std::string name;           // thread_name of the header, may be empty
  std::string file;           // base name of the events file
  uint64_t events = 0;        // records read
  uint64_t calls = 0;         // calls begun on this thread (inherited frames excluded)
  double first_ns = 0;        // first and last event time, ns of the process clock
  double last_ns = 0;
  double duration_ns = 0;     // last - first
  // "finished" | "unfinished" | "exec" | "ended" | "cut": a stream without its end is
  // "ended" when the run ended normally (run_ended_normally: the process left by _exit, or
  // another thread's exit, as a forked child does), "cut" otherwise (killed, or unknown).
  std::string status;
  uint64_t left_open = 0;     // calls open at the end (closed as unfinished or cut)
  uint64_t bytes = 0;         // file size
  uint64_t event_bytes = 0;   // bytes of records read (the trace's own size)
  double paused_ns = 0;       // time the recorder held the thread (PAUSE records)
  // Off the CPU between its first and last records (session.sched): preempted (taken out of
  // the times) and blocked (kept in them), and how many times each.
  double preempted_ns = 0;
  double blocked_ns = 0;
  uint64_t preemptions = 0;
  uint64_t blocks = 0;
  // Calibrations in the run (CALIB records): how many, and the cheapest and dearest cost.
  uint64_t calibrations = 0;
  double calibration_min_ns = 0;
  double calibration_max_ns = 0;
  // What ran unrecorded (HIDDEN records): calls a record-time filter kept out and calls the
  // duration filter took back, whose probes ran all the same, and the time value capture
  // (-A/-R/--auto-args) took. Compensation takes their cost out.
  uint64_t filtered_calls = 0;
  uint64_t taken_back_calls = 0;
  double capture_ns = 0;
  double burst_ns = 0;        // of which host bursts the fenced probes caught (header)
  uint64_t bursts = 0;
  uint64_t unmatched_exits = 0;  // header counter + exits the walk could not match
  uint64_t lost_events = 0;      // max(header counter, sum of LOST records)
  bool stopped = false;          // the runtime stopped recording it (the file could not grow)
  format::RecordCensus census;   // where its bytes go, by record form
};

// What compensation subtracts per recorded call in a process (compensation.hpp): the
// cheapest calibration, with the host bursts expected where no check looks.
struct ProbeCostInfo {
  double inner_ns = 0;  // inside each call's own time
  double outer_ns = 0;  // in all, from its caller's time
  size_t calibrations = 0;  // measured `overhead` lines: 1 (start-up or exit) or 2 (both)
  // With record-time filters: a call a filter keeps out and one the duration filter takes
  // back, in all (their probes ran); < 0: not measured (no such filter).
  double hidden_ns = -1;
  double taken_back_ns = -1;
  // A library call's probe (the stub's), in all and inside the call; < 0: not measured
  // (charged as the other calls).
  double libcall_outer_ns = -1;
  double libcall_inner_ns = -1;
};

struct ProcessInfo {
  std::string key;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::string parent;  // key of the parent image for a fork child, else empty
  std::string exe;
  std::optional<std::string> exec;  // the program this image exec'd, if it did
  std::string clock_kind;
  double ticks_per_second = 0;
  std::optional<ProbeCostInfo> probe_cost;  // none without a measured calibration
  size_t calibrations = 0;  // `overhead` lines, failed ones included
  int64_t libcall_slots = -1;    // GOT slots redirected to library-call probes; -1: none line
  uint64_t libcall_refused = 0;  // GOT slots refused (GLOB_DAT, unresolved)
  int64_t xray_functions = -1;   // functions whose XRay sleds were patched; -1: no line
  uint64_t xray_refused = 0;     // XRay sleds refused
  int64_t pg_trampolines = -1;   // -pg functions given trampolines; -1: no line
  uint64_t pg_left = 0;          // -pg functions that keep their call of mcount
  std::vector<std::string> own_unwinder_left;  // left out for the program's own unwinder
  // When it installed a seccomp filter (ns of the process clock) and which mode; after it
  // the runtime made no system call (its threads' recordings end as their files filled).
  std::optional<double> sandboxed_ns;
  std::string sandbox;
  // Entry patching (record --patch): the modules looked at, what was patched and refused.
  std::vector<format::PatchedModule> patching;
  // Instrumented modules loaded with dlmopen into another namespace: not recorded.
  std::vector<std::string> dlmopen_modules;
  // Modules of another namespace recorded, their constructors' calls not (a note, not a
  // problem: docs/record.md, "dlmopen").
  std::vector<std::string> dlmopen_recorded;
  std::vector<ThreadInfo> threads;
};

// True when the recorded program exited by itself (session.json has its status and no
// signal): threads whose stream ends without its END record then ended normally (_exit,
// exit_group from another thread), not cut. A child killed by a signal while the program
// exited normally cannot be told apart (the runtime writes nothing at _exit or at a kill).
bool run_ended_normally(const format::Recording& rec);

struct RecordingInfo {
  std::string dir;
  std::optional<format::Session> session;
  std::string scheduler;  // sched_note.hpp, scheduler_status
  std::vector<ProcessInfo> processes;
  uint64_t events = 0;
  uint64_t calls = 0;
  format::RecordCensus census;  // all threads' bytes by record form
  double duration_ns = 0;  // latest thread end - earliest thread start
  std::vector<std::string> problems;  // one sentence each
  std::vector<std::string> warnings;  // the damage part of `problems`, for stderr
};

// Walks every thread of `rec`. Errors: a thread file that cannot be opened.
Result<RecordingInfo> gather_info(const format::Recording& rec, const ProgressFn& progress);

}  // namespace callmon::analysis
