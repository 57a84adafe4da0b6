// Attaching to a running process and leaving it intact: every thread seized and stopped,
// and at the end every original byte restored, every thread that had just hit a breakpoint
// moved back onto the restored instruction, and every signal it had pending passed on.
#include <dirent.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "monitor/proc_tasks.hpp"
#include "monitor/ptrace_refusal.hpp"
#include "monitor/tracer.hpp"

namespace callmon::monitor {
namespace {

constexpr long kAttachOptions = PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
                                PTRACE_O_TRACEVFORK | PTRACE_O_TRACEEXEC;

}  // namespace

Status Tracer::attach(pid_t pid) {
  attached_ = true;
  root_ = pid;
  if (kill(pid, 0) != 0 && errno == ESRCH)
    return Error{"no process with id " + std::to_string(pid)};
  auto owned = std::make_unique<Process>();
  Process& p = *owned;
  p.pid = pid;
  processes_.push_back(std::move(owned));
  // Threads created while we attach are taken too (seize_threads lists them again; those
  // created by an already seized thread come by PTRACE_O_TRACECLONE).
  std::string error;
  seize_threads(
      pid, kAttachOptions,
      [&](pid_t tid) {
        add_thread(p, tid);
        ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
      },
      [&](pid_t tid, int err) {
        if (err == ESRCH) return true;  // the thread ended meanwhile
        if (tid == pid || live_.empty()) {
          error = "not permitted to ptrace process " + std::to_string(pid) + ": " +
                  ptrace_refusal(pid, err);
          return false;
        }
        outcome_.warnings.push_back("cannot trace thread " + std::to_string(tid) + ": " +
                                    std::strerror(err));
        return true;
      });
  if (!error.empty()) return Error{error};
  if (live_.empty()) return Error{"no process with id " + std::to_string(pid)};
  // Wait until every thread is in a ptrace-stop before touching memory. A signal that
  // arrives first is kept and delivered when the thread is resumed.
  wait_all_stopped([&](ThreadState& t, int status) {
    const int event = status >> 16;
    if (event == 0 && WSTOPSIG(status) != SIGTRAP) t.deferred_signal = WSTOPSIG(status);
    if (event == PTRACE_EVENT_CLONE) {
      unsigned long child = 0;
      if (ptrace(PTRACE_GETEVENTMSG, t.tid, nullptr, &child) == 0) {
        ThreadState* nt = add_thread(p, static_cast<pid_t>(child));
        if (parked_.erase(static_cast<pid_t>(child)) > 0) nt->stopped = true;
      }
    }
  });
  if (live_.empty()) return Error{"process " + std::to_string(pid) + " ended while attaching"};
  setup_image(p);
  if (options_.duration > 0)
    deadline_ns_ = now_ns() + static_cast<uint64_t>(options_.duration * 1e9);
  for (auto& [tid, t] : live_) {
    const int sig = t->deferred_signal;
    t->deferred_signal = 0;
    resume(*t, sig);
  }
  return ok_status();
}

void Tracer::detach_all() {
  outcome_.detached = true;
  for (auto& [tid, t] : live_)
    if (!t->stopped) ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
  wait_all_stopped([&](ThreadState& t, int status) {
    const pid_t tid = t.tid;
    const int sig = WSTOPSIG(status);
    const int event = status >> 16;
    if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK ||
        event == PTRACE_EVENT_VFORK) {
      unsigned long child = 0;
      if (ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &child) == 0) {
        handle_new_task(t, static_cast<pid_t>(child), event);
        if (ThreadState* nt = live_.count(static_cast<pid_t>(child)) != 0
                                  ? live_[static_cast<pid_t>(child)]
                                  : nullptr) {
          if (nt->stopped) return;
          ptrace(PTRACE_INTERRUPT, nt->tid, nullptr, nullptr);
        }
      }
      return;
    }
    if (event != 0) return;
    if (sig == SIGTRAP) {
      if (t.stepping != 0) {
        // The step over the displaced instruction is complete; nothing to re-arm.
        Breakpoint* bp = nullptr;
        auto b = t.proc->bps.find(t.stepping);
        if (b != t.proc->bps.end()) bp = &b->second;
        if (bp != nullptr && bp->steppers > 0) --bp->steppers;
        t.stepping = 0;
        return;
      }
      siginfo_t si{};
      user_regs_struct regs{};
      if (ptrace(PTRACE_GETSIGINFO, tid, nullptr, &si) == 0 && si.si_code == SI_KERNEL &&
          ptrace(PTRACE_GETREGS, tid, nullptr, &regs) == 0 &&
          (t.proc->bps.count(regs.rip - 1) != 0 || t.proc->retired.count(regs.rip - 1) != 0)) {
        // It hit a breakpoint: once the byte is restored it must execute that instruction.
        regs.rip -= 1;
        ptrace(PTRACE_SETREGS, tid, nullptr, &regs);
        return;
      }
    }
    t.pending_signal = t.stepping != 0 ? t.deferred_signal : sig;
  });
  for (auto& p : processes_) {
    for (auto& [addr, bp] : p->bps)
      if (bp.armed || bp.steppers > 0) p->mem.write(addr, &bp.orig, 1);
  }
  for (auto& [tid, t] : live_) {
    int sig = t->pending_signal != 0 ? t->pending_signal : t->deferred_signal;
    // PTRACE_DETACH also clears the single-step flag and any pending PTRACE_INTERRUPT.
    ptrace(PTRACE_DETACH, tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(sig)));
    t->alive = false;
  }
  live_.clear();
}

void Tracer::wait_all_stopped(const std::function<void(ThreadState&, int status)>& on_stop) {
  auto all_stopped = [&] {
    for (auto& [tid, t] : live_)
      if (!t->stopped) return false;
    return true;
  };
  while (!all_stopped()) {
    int status = 0;
    pid_t tid = waitpid(-1, &status, __WALL);
    if (tid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = live_.find(tid);
    if (it == live_.end()) {
      // A new thread or child seen before its creator's event: it is taken along later.
      if (WIFSTOPPED(status)) parked_.insert(tid);
      continue;
    }
    ThreadState& t = *it->second;
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      handle_exit(t, status);
      continue;
    }
    t.stopped = true;
    on_stop(t, status);
  }
}

}  // namespace callmon::monitor
