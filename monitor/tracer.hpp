// The tracer behind monitor_program and monitor_attach: the state of every traced process
// and thread, and the waitpid loop that turns ptrace stops into counts. Internal to the
// monitor library. Its member functions live in several files: tracer.cpp (the loop, thread
// and process events), tracer_hits.cpp (breakpoint hits, steps, timing), tracer_image.cpp
// (finding units and arming breakpoints), tracer_detach.cpp (leaving a process intact).
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analysis/elf_image.hpp"
#include "monitor/emulate.hpp"
#include "monitor/monitor.hpp"
#include "monitor/tracee_memory.hpp"

namespace callmon::monitor {

struct Breakpoint {
  uint8_t orig = 0;           // the byte the int3 replaced
  bool armed = false;         // the int3 is in memory
  bool entry = false;         // a hit counts `unit`
  uint8_t rescan = 0;         // the module list may have changed: 1 once (program entry),
                              // 2 at every hit (the dynamic linker's r_debug hook)
  uint32_t unit = 0;
  uint32_t return_refs = 0;   // --timing: pending frames that return here
  uint32_t steppers = 0;      // threads single-stepping over it with the original byte back
  Emulation emu;
};

struct Frame {
  uint32_t unit = 0;
  uint64_t ret_addr = 0;
  uint64_t sp_after = 0;  // the stack pointer once the function has returned (entry rsp + 8)
  uint64_t start_ns = 0;
  uint64_t child_ns = 0;  // time of timed callees, for self time
};

struct Process;

struct ThreadState {
  pid_t tid = 0;
  Process* proc = nullptr;
  bool alive = true;
  bool stopped = false;
  uint64_t stepping = 0;       // breakpoint address being single-stepped over, 0 if none
  int deferred_signal = 0;     // arrived during a step; delivered when it completes
  int pending_signal = 0;      // to deliver at detach
  std::vector<uint64_t> hits;  // per unit, grown on demand
  std::vector<uint64_t> total_ns, self_ns;
  std::vector<uint32_t> active;  // --timing: activations of each unit on the stack
  std::vector<Frame> frames;
};

struct Process {
  pid_t pid = 0;
  TraceeMemory mem;
  std::string exe;
  bool image_ready = false;   // breakpoints are set (after the first exec stop)
  bool release = false;       // an unfollowed fork child: clean and detach at its first stop
  std::unordered_map<uint64_t, Breakpoint> bps;
  std::unordered_set<uint64_t> retired;  // breakpoints removed while threads may have hit them
  std::vector<Unit> units;
  std::set<std::pair<std::string, uint64_t>> modules;  // (path, bias) already scanned
  std::vector<std::unique_ptr<ThreadState>> threads;
  uint64_t stops = 0, emulated = 0, stepped = 0;
};

class Tracer {
 public:
  explicit Tracer(const MonitorOptions& options);
  ~Tracer();

  // Takes over `pid`, already PTRACE_SEIZEd and about to exec the program.
  void adopt_launched(pid_t pid);
  // Seizes every thread of `pid`, stops them, arms breakpoints and resumes them.
  Status attach(pid_t pid);
  // Handles stops until every traced process has gone, or (attach mode) until a stop was
  // requested or the duration has passed, in which case everything is detached.
  void run();
  MonitorOutcome take_outcome();

 private:
  // tracer.cpp
  void handle_wait(pid_t tid, int status);
  void handle_exit(ThreadState& t, int status);
  void handle_event(ThreadState& t, int event);
  void handle_exec(ThreadState& t);
  void handle_new_task(ThreadState& parent, pid_t child, int event);
  void start_new_thread(pid_t tid);
  void resume(ThreadState& t, int signal);
  ThreadState* add_thread(Process& p, pid_t tid);
  void finish_image(Process& p, const std::string& end);
  void record_root_exit(int status);
  void drop_thread(ThreadState& t);
  bool stop_due() const;
  // tracer_hits.cpp
  void handle_trap(ThreadState& t);
  void handle_breakpoint(ThreadState& t, user_regs_struct& regs, uint64_t addr);
  void continue_over(ThreadState& t, user_regs_struct& regs, uint64_t addr);
  void finish_step(ThreadState& t);
  void push_frame(ThreadState& t, const user_regs_struct& regs, uint32_t unit);
  // Ends the frames of `t` that returned (stack pointer at or above theirs); return
  // breakpoints left unused are removed, except the one at `keep` being handled.
  void pop_frames(ThreadState& t, uint64_t sp, uint64_t now, uint64_t keep);
  // Disarms and forgets the breakpoint at `addr` when nothing needs it any more.
  void drop_if_unused(Process& p, uint64_t addr);
  // tracer_image.cpp
  void setup_image(Process& p);
  void rescan(Process& p);
  void add_breakpoint(Process& p, uint64_t addr, const uint8_t* code, size_t size,
                      Breakpoint flags);
  bool read_original(Process& p, uint64_t addr, uint8_t* buf, size_t size);
  bool arm(Process& p, uint64_t addr, Breakpoint& bp);
  void disarm(Process& p, uint64_t addr, Breakpoint& bp);
  void release_process(Process& p);
  // tracer_detach.cpp
  void detach_all();
  // Waits until every live thread is in a ptrace-stop: parks unknown new tasks, handles
  // exits, marks each stopped thread and hands it with its wait status to `on_stop`.
  void wait_all_stopped(const std::function<void(ThreadState&, int status)>& on_stop);

  MonitorOptions options_;
  std::shared_ptr<analysis::ElfCache> cache_;
  std::vector<std::unique_ptr<Process>> processes_;
  std::unordered_map<pid_t, ThreadState*> live_;   // traced threads by tid
  std::set<pid_t> parked_;   // new tasks stopped before their creator's event was seen
  pid_t root_ = 0;           // the launched or attached process
  bool root_done_ = false;   // its exit status is known
  bool attached_ = false;
  uint64_t deadline_ns_ = 0;
  MonitorOutcome outcome_;
};

// CLOCK_MONOTONIC in nanoseconds.
uint64_t now_ns();

}  // namespace callmon::monitor
