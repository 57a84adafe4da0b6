// The scheduler recorder of `callmon record`: the kernel's context-switch records of the
// recorded program, every thread of every process it starts, kept in the recording's
// `session.sched` (include/callmon/format/sched.hpp) so analysis knows when each thread was
// off the CPU, and why (docs/runtime.md, "Scheduler time").
//
// It opens one software event per CPU on the program's first process before it execs
// (`inherit`: threads and forked children are covered as they are created; `enable_on_exec`:
// nothing of callmon's own start-up is seen), and a thread of callmon's drains the kernel's
// ring buffers into the file while the program runs. Nothing runs in the program: its hot
// path pays nothing, and a program killed by SIGKILL loses no switch record.
//
// `record -p PID` uses attach(): the process already runs, so the events are opened on each
// of its threads (per thread and per CPU, `inherit` for the threads created during the
// attach) and enabled at once; the same file comes out, covering the attach's duration.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>

namespace callmon::tools {

class SchedRecorder {
 public:
  // Starts recording the switches of `pid`, a child of ours that has not exec'd yet, into
  // `path`. Never fails: when the kernel refuses (perf_event_paranoid, a seccomp filter),
  // the file says so with the reason (status kUnavailable) and unavailable() is true.
  static std::unique_ptr<SchedRecorder> start(pid_t pid, const std::string& path);

  // Starts recording the switches of every thread of `pid`, a running process (attached
  // to by `record -p`), into `path`, from now until finish(). Threads the process creates
  // from now on are covered. Never fails, like start().
  static std::unique_ptr<SchedRecorder> attach(pid_t pid, const std::string& path);

  ~SchedRecorder();
  SchedRecorder(const SchedRecorder&) = delete;
  SchedRecorder& operator=(const SchedRecorder&) = delete;

  // Drains what is left once the program has ended, completes the file's header and
  // closes everything. Called once; the destructor calls it if nobody did.
  void finish();

  // Why switches are not recorded (empty when they are).
  const std::string& unavailable() const;

  struct State;

 private:
  explicit SchedRecorder(std::unique_ptr<State> state);
  // What start() and attach() share: the file, `open_rings` (opens the events, returns the
  // errno of a refusal, or of why nothing could be opened, or 0), the drain thread.
  static std::unique_ptr<SchedRecorder> begin_recording(
      const std::string& path, const std::function<int(State&)>& open_rings);
  std::unique_ptr<State> state_;
};

}  // namespace callmon::tools
