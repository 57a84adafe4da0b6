// ThreadGroup: the threads of an attached process under ptrace (see thread_group.hpp).
#include "attach/thread_group.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "monitor/proc_status.hpp"
#include "monitor/proc_tasks.hpp"
#include "monitor/ptrace_refusal.hpp"

namespace callmon::attach {
namespace {

uint64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

// The system call thread `tid` is blocked in, from /proc (-1: running or unknown).
long blocked_syscall(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/syscall");
  long nr = -1;
  if (!(in >> nr)) return -1;
  return nr;
}

// System calls a thread waits in without holding a lock of libc's or the loader's: an
// injected dlopen on that thread cannot wait for itself.
bool safe_syscall(long nr) {
  switch (nr) {
    case 0: case 7: case 17: case 19: case 23: case 34: case 35: case 43: case 45: case 47:
    case 61: case 128: case 130: case 230: case 232: case 270: case 271: case 281: case 288:
    case 441:
      // read poll pread64 readv select pause nanosleep accept recvfrom recvmsg wait4
      // rt_sigtimedwait rt_sigsuspend clock_nanosleep epoll_wait pselect6 ppoll
      // epoll_pwait accept4 epoll_pwait2
      return true;
    default:
      return false;
  }
}

// Why the kernel refused to trace `pid`, in the words that fit: a kernel thread, a main
// thread that has exited while the others run (a zombie leader ptrace cannot take; one of
// the other threads' ids can be given instead), else the permission's reasons.
std::string refusal_of(pid_t pid, int err) {
  const std::string id = std::to_string(pid);
  std::vector<std::string> state = monitor::proc_status_fields(pid, "State");
  if (!state.empty() && monitor::proc_status_fields(pid, "VmSize").empty() &&
      monitor::proc_status_fields(pid, "Kthread") != std::vector<std::string>{"0"})
    return "process " + id + " is a kernel thread: there is no program to record";
  if (!state.empty() && state[0] == "Z") {
    for (pid_t tid : monitor::list_tasks(pid))
      if (tid != pid)
        return "the main thread of process " + id + " has exited (a zombie) while its other "
               "threads run, and ptrace cannot take it; give one of the others' ids, e.g. -p " +
               std::to_string(tid);
    return "process " + id + " has exited (a zombie)";
  }
  return "not permitted to ptrace process " + id + ": " + monitor::ptrace_refusal(pid, err);
}

}  // namespace

ThreadGroup::~ThreadGroup() {
  if (!threads_.empty()) detach_all();
}

void ThreadGroup::add(pid_t tid) { threads_.emplace(tid, Thread{}); }

Status ThreadGroup::seize(pid_t pid) {
  pid_ = pid;
  if (kill(pid, 0) != 0 && errno == ESRCH) return Error{"no process with id " + std::to_string(pid)};
  // Threads created while we seize are taken too (seize_threads lists them again).
  std::string error;
  monitor::seize_threads(
      pid, PTRACE_O_TRACECLONE, [&](pid_t tid) { add(tid); },
      [&](pid_t tid, int err) {
        // Another thread that ended meanwhile, or is ending: the kernel refuses to trace an
        // exiting task with EPERM. Its tid may come before the main thread's (the set is
        // sorted, and tids wrap at pid_max), so this must not depend on what was seized.
        if ((err == ESRCH || err == EPERM) && tid != pid) return true;
        if (!threads_.empty()) return true;
        error = err == ESRCH ? "no process with id " + std::to_string(pid)
                             : refusal_of(pid, err);
        return false;
      });
  if (!error.empty()) return Error{error};
  if (threads_.empty()) return Error{"no process with id " + std::to_string(pid)};
  auto mem = monitor::TraceeMemory::open(pid);
  if (!mem) return Error{mem.error()};
  mem_ = std::move(mem).value();
  return ok_status();
}

pid_t ThreadGroup::pick_caller() const {
  pid_t futex_waiter = 0;
  for (auto& [tid, t] : threads_) {
    long nr = blocked_syscall(pid_, tid);
    if (safe_syscall(nr)) return tid;
    if (nr == 202 && !futex_waiter) futex_waiter = tid;  // futex: waits, holds nothing of libc's
  }
  if (threads_.count(pid_)) return pid_;
  if (futex_waiter) return futex_waiter;
  return threads_.begin()->first;
}

pid_t ThreadGroup::pick_idle() const {
  pid_t futex_waiter = 0;
  for (auto& [tid, t] : threads_) {
    long nr = blocked_syscall(pid_, tid);
    if (safe_syscall(nr)) return tid;
    if (nr == 202 && !futex_waiter) futex_waiter = tid;
  }
  return futex_waiter;
}

bool ThreadGroup::stopped_idle(pid_t tid) const {
  user_regs_struct r{};
  if (!get_regs(tid, &r)) return false;
  // Stopped inside the call, which the kernel will restart (-ERESTART*: -512 to -516) or
  // has ended with EINTR: the thread has not gone on into the program's code.
  const auto ret = static_cast<long long>(r.rax);
  const long nr = static_cast<long>(r.orig_rax);
  return (safe_syscall(nr) || nr == 202) && ((ret >= -516 && ret <= -512) || ret == -EINTR);
}

bool ThreadGroup::wait_one(int timeout_ms, pid_t* tid, int* status) {
  uint64_t deadline = now_ms() + static_cast<uint64_t>(timeout_ms);
  for (;;) {
    pid_t r = waitpid(-1, status, __WALL | WNOHANG);
    if (r > 0) {
      *tid = r;
      return true;
    }
    if (r < 0 && errno != EINTR) return false;  // nothing traced any more
    if (now_ms() >= deadline) return false;
    usleep(50);
  }
}

bool ThreadGroup::handle(pid_t tid, int status) {
  auto it = threads_.find(tid);
  if (it == threads_.end()) {
    if (!WIFSTOPPED(status)) return false;
    // A new thread whose creator's clone event has not been seen yet.
    it = threads_.emplace(tid, Thread{}).first;
  }
  Thread& t = it->second;
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    threads_.erase(it);
    return false;
  }
  if (!WIFSTOPPED(status)) return false;
  t.stopped = true;
  const int sig = WSTOPSIG(status);
  const int event = status >> 16;
  if (event == PTRACE_EVENT_CLONE) {
    unsigned long child = 0;
    // The child may have been seen already: stopped (then it is known), or even started and
    // ended, its exit reaped (its statuses can come before its creator's event): then its
    // /proc entry is gone and there is nothing to wait for.
    if (ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &child) == 0) {
      const auto c = static_cast<pid_t>(child);
      const std::string task = "/proc/" + std::to_string(pid_) + "/task/" + std::to_string(c);
      if (!threads_.count(c) && access(task.c_str(), F_OK) == 0) threads_.emplace(c, Thread{});
    }
  } else if (event == 0 && sig != SIGTRAP) {
    t.pending_signal = sig;  // a signal for the program: delivered when it runs again
  }
  return true;
}

bool ThreadGroup::stop(pid_t tid) {
  auto it = threads_.find(tid);
  if (it == threads_.end()) return false;
  it->second.want_stop = true;
  if (it->second.stopped) return true;
  ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
  while (threads_.count(tid) && !threads_[tid].stopped) {
    pid_t who;
    int status;
    if (!wait_one(5000, &who, &status)) return false;
    handle(who, status);
    auto w = threads_.find(who);
    if (w != threads_.end() && w->second.stopped && !w->second.want_stop) {
      ptrace(PTRACE_CONT, who, nullptr, reinterpret_cast<void*>(static_cast<long>(w->second.pending_signal)));
      w->second.pending_signal = 0;
      w->second.stopped = false;
    }
  }
  return threads_.count(tid) != 0;
}

bool ThreadGroup::stop_all() {
  for (;;) {
    bool all = true;
    for (auto& [tid, t] : threads_) {
      if (!t.want_stop) {
        t.want_stop = true;
        if (!t.stopped) ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
      }
      if (!t.stopped) all = false;
    }
    if (threads_.empty()) return false;
    if (all) return true;
    pid_t who;
    int status;
    // A thread that does not stop within 5 s (uninterruptible sleep): false, and nothing
    // may be patched.
    if (!wait_one(5000, &who, &status)) return false;
    handle(who, status);  // a new thread comes in stopped, and is asked to stay so above
  }
}

void ThreadGroup::resume_all() {
  for (auto& [tid, t] : threads_) {
    t.want_stop = false;
    if (!t.stopped) continue;
    ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(static_cast<long>(t.pending_signal)));
    t.pending_signal = 0;
    t.stopped = false;
  }
}

int ThreadGroup::run_until_stop(pid_t tid, int timeout_ms) {
  auto it = threads_.find(tid);
  if (it == threads_.end()) return -1;
  it->second.stopped = false;
  // Its own signals wait for the end of the injected call (pending_signal is kept).
  ptrace(PTRACE_CONT, tid, nullptr, nullptr);
  uint64_t deadline = now_ms() + static_cast<uint64_t>(timeout_ms);
  for (;;) {
    pid_t who;
    int status;
    uint64_t now = now_ms();
    if (now >= deadline || !wait_one(static_cast<int>(deadline - now), &who, &status)) return -2;
    int kept = threads_.count(who) ? threads_[who].pending_signal : 0;
    bool stopped = handle(who, status);
    if (who == tid) {
      if (!threads_.count(tid)) return -1;
      if (stopped) {
        // A stop for the program's signal during the call: kept, the call goes on.
        const int sig = WSTOPSIG(status);
        if ((status >> 16) == 0 && sig != SIGSEGV && sig != SIGTRAP) {
          threads_[tid].pending_signal = sig;
          threads_[tid].stopped = false;
          ptrace(PTRACE_CONT, tid, nullptr, nullptr);
          continue;
        }
        if ((status >> 16) != 0) {  // an event (clone by the call, interrupt): go on
          threads_[tid].stopped = false;
          ptrace(PTRACE_CONT, tid, nullptr, nullptr);
          continue;
        }
        if (sig == SIGSEGV) threads_[tid].pending_signal = kept;  // ours, not the program's
        return status;
      }
      continue;
    }
    auto w = threads_.find(who);
    if (stopped && w != threads_.end() && !w->second.want_stop) {
      ptrace(PTRACE_CONT, who, nullptr, reinterpret_cast<void*>(static_cast<long>(w->second.pending_signal)));
      w->second.pending_signal = 0;
      w->second.stopped = false;
    }
  }
}

bool ThreadGroup::step(pid_t tid) {
  auto it = threads_.find(tid);
  if (it == threads_.end()) return false;
  int kept = it->second.pending_signal;
  it->second.stopped = false;
  ptrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr);
  for (;;) {
    pid_t who;
    int status;
    if (!wait_one(5000, &who, &status)) return false;
    bool stopped = handle(who, status);
    if (who != tid) continue;  // every other thread is stopped already, or asked to be
    if (!threads_.count(tid)) return false;
    if (!stopped) continue;
    if ((status >> 16) == 0 && WSTOPSIG(status) == SIGTRAP) {
      threads_[tid].pending_signal = kept;
      return true;
    }
    // A signal arrived before the instruction ran: kept; step again.
    threads_[tid].stopped = false;
    ptrace(PTRACE_SINGLESTEP, tid, nullptr, nullptr);
  }
}

void ThreadGroup::detach_all() {
  stop_all();
  for (auto& [tid, t] : threads_)
    ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<long>(t.pending_signal)));
  threads_.clear();
}

bool ThreadGroup::get_regs(pid_t tid, user_regs_struct* regs) const {
  return ptrace(PTRACE_GETREGS, tid, nullptr, regs) == 0;
}

bool ThreadGroup::set_regs(pid_t tid, const user_regs_struct& regs) const {
  return ptrace(PTRACE_SETREGS, tid, nullptr, &regs) == 0;
}

}  // namespace callmon::attach
