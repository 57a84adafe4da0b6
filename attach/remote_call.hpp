// Calling a function of the attached program in one of its stopped threads: every register
// (general, x87/SSE/AVX state) saved, the call made on the thread's own stack below its red
// zone with a return address of 0, whose fault hands the thread back, and everything put
// back. A thread stopped inside a system call is fine: the call runs with the restart
// marker cleared (orig_rax -1), and the restored registers restart the system call as the
// kernel would have.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attach/thread_group.hpp"
#include "format/result.hpp"

namespace callmon::attach {

class RemoteCall {
 public:
  // `tid` must be stopped in `group`. Saves its state; the destructor restores it.
  RemoteCall(ThreadGroup& group, pid_t tid);
  ~RemoteCall();
  RemoteCall(const RemoteCall&) = delete;
  RemoteCall& operator=(const RemoteCall&) = delete;

  bool ok() const { return saved_; }
  pid_t tid() const { return tid_; }
  // The thread's instruction pointer when it was stopped.
  uint64_t stopped_rip() const { return regs_.rip; }

  // Copies `s` (with its NUL) below the thread's stack pointer; returns its address, 0 when
  // it could not be written. Valid until the RemoteCall ends.
  uint64_t put_string(const std::string& s);
  // Calls fn(args...) (at most 6 integer arguments) and returns its rax. Errors: the thread
  // exited, crashed (the fault is not ours) or did not return within `timeout_ms` (then it
  // is stopped where it was, and restore() abandons the call).
  Result<uint64_t> call(uint64_t fn, const std::vector<uint64_t>& args, int timeout_ms = 60000);
  // Puts the saved state back (also done by the destructor); the thread stays stopped.
  void restore();

 private:
  ThreadGroup& group_;
  pid_t tid_;
  bool saved_ = false;
  user_regs_struct regs_{};
  std::vector<uint8_t> xstate_;
  uint64_t scratch_ = 0;  // lowest address used below the stack pointer
};

}  // namespace callmon::attach
