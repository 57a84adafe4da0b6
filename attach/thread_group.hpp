// Every thread of a running process under ptrace, for an attach: seized without stopping
// them, then stopped one at a time (the thread that runs the injected calls) or all at once
// (while patches are written), and let go again with every signal that arrived meanwhile
// delivered. Stops of threads that should run (a signal for the program, a new thread) are
// passed on at once, so the program goes on while one thread runs an injected call.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <map>
#include <string>

#include "format/result.hpp"
#include "monitor/tracee_memory.hpp"

namespace callmon::attach {

class ThreadGroup {
 public:
  ThreadGroup() = default;
  ~ThreadGroup();  // detaches whatever is still attached
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;

  // Seizes every thread of `pid` (PTRACE_SEIZE, new threads followed); they keep running.
  // Errors: no such process, or ptrace refused (the kernel rule that refused it, named).
  Status seize(pid_t pid);

  pid_t pid() const { return pid_; }
  const monitor::TraceeMemory& mem() const { return mem_; }
  bool gone() const { return threads_.empty(); }
  // Threads followed now.
  size_t thread_count() const { return threads_.size(); }

  // The thread best suited to run an injected call: one blocked in a system call that
  // holds no lock of the program's (read, poll, accept, sleeps...), else the main thread.
  pid_t pick_caller() const;
  // For a call made while the program records (attach_pass): a thread blocked in such a
  // system call, else one waiting in futex; 0 when none is (the main thread may then be
  // anywhere, inside malloc or the loader).
  pid_t pick_idle() const;
  // Whether stopped thread `tid` was stopped inside one of those system calls.
  bool stopped_idle(pid_t tid) const;

  // Stops one thread / every thread and waits until it is (they are) in a ptrace-stop.
  // Signals that arrive meanwhile are kept for resume. False: the thread (every thread)
  // is gone, or one did not stop within 5 s (gone() tells which).
  bool stop(pid_t tid);
  bool stop_all();
  // Lets every stopped thread run again, with the signals kept for it.
  void resume_all();
  // Lets one stopped thread run until it stops again at a signal or exits (an injected
  // call's end). Other threads' stops are handled meanwhile (passed on, or kept while
  // stop_all's state holds). Returns the stop's wait status, or -1 when it exited.
  int run_until_stop(pid_t tid, int timeout_ms);
  // Executes one instruction of stopped thread `tid`. False if it is gone.
  bool step(pid_t tid);
  // Detaches every thread (stopping them first), delivering the signals kept.
  void detach_all();

  bool get_regs(pid_t tid, user_regs_struct* regs) const;
  bool set_regs(pid_t tid, const user_regs_struct& regs) const;
  template <class F>
  void for_each_stopped(F&& f) const {
    for (auto& [tid, t] : threads_)
      if (t.stopped) f(tid);
  }

 private:
  struct Thread {
    bool stopped = false;
    bool want_stop = false;  // asked to stop (PTRACE_INTERRUPT sent)
    int pending_signal = 0;  // to deliver when it runs again
  };
  // Handles one wait status of `tid`; returns whether it is a stop of that thread.
  bool handle(pid_t tid, int status);
  bool wait_one(int timeout_ms, pid_t* tid, int* status);
  void add(pid_t tid);

  pid_t pid_ = 0;
  monitor::TraceeMemory mem_;
  std::map<pid_t, Thread> threads_;
};

}  // namespace callmon::attach
