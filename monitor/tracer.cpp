// The tracer's waitpid loop and its handling of thread and process events: new threads,
// forks, vforks, execs, exits, group-stops and signals for the program.
#include "monitor/tracer.hpp"

#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>

#include "analysis/symbolizer.hpp"

namespace callmon::monitor {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

namespace {

std::string describe_end(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  const char* name = sigabbrev_np(WTERMSIG(status));
  return std::string("signal SIG") + (name != nullptr ? name : std::to_string(WTERMSIG(status)).c_str());
}

bool is_stop_signal(int sig) {
  return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

}  // namespace

Tracer::Tracer(const MonitorOptions& options)
    : options_(options), cache_(analysis::make_elf_cache()) {}

Tracer::~Tracer() = default;

ThreadState* Tracer::add_thread(Process& p, pid_t tid) {
  auto t = std::make_unique<ThreadState>();
  t->tid = tid;
  t->proc = &p;
  ThreadState* raw = t.get();
  p.threads.push_back(std::move(t));
  live_[tid] = raw;
  return raw;
}

void Tracer::adopt_launched(pid_t pid) {
  root_ = pid;
  auto p = std::make_unique<Process>();
  p->pid = pid;
  add_thread(*p, pid);
  processes_.push_back(std::move(p));
}

bool Tracer::stop_due() const {
  if (options_.stop_requested != nullptr && *options_.stop_requested != 0) return true;
  return deadline_ns_ != 0 && now_ns() >= deadline_ns_;
}

void Tracer::run() {
  while (!live_.empty() || (!attached_ && !root_done_)) {
    if (attached_ && stop_due()) {
      detach_all();
      return;
    }
    int status = 0;
    pid_t tid = waitpid(-1, &status, __WALL);
    if (tid < 0) {
      if (errno == EINTR) continue;  // a signal for us: check whether to stop
      break;                         // ECHILD: nothing left to wait for
    }
    handle_wait(tid, status);
  }
}

void Tracer::resume(ThreadState& t, int signal) {
  // ESRCH here means the thread was killed meanwhile; its exit is reported by waitpid.
  ptrace(PTRACE_CONT, t.tid, nullptr, reinterpret_cast<void*>(static_cast<intptr_t>(signal)));
  t.stopped = false;
}

void Tracer::record_root_exit(int status) {
  root_done_ = true;
  if (WIFEXITED(status)) {
    outcome_.status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome_.signal = WTERMSIG(status);
    outcome_.status = 128 + outcome_.signal;
  }
}

void Tracer::handle_wait(pid_t tid, int status) {
  auto it = live_.find(tid);
  if (it == live_.end()) {
    if ((WIFEXITED(status) || WIFSIGNALED(status)) && tid == root_) record_root_exit(status);
    // A new thread or child can report its first stop before its creator's PTRACE_EVENT
    // does: keep it stopped until we know which process it belongs to.
    if (WIFSTOPPED(status)) parked_.insert(tid);
    return;
  }
  ThreadState& t = *it->second;
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    handle_exit(t, status);
    return;
  }
  if (!WIFSTOPPED(status)) return;
  t.stopped = true;
  if (t.proc->release) {
    release_process(*t.proc);
    return;
  }
  const int sig = WSTOPSIG(status);
  const int event = status >> 16;
  if (event == PTRACE_EVENT_STOP) {
    if (is_stop_signal(sig)) {
      // Group-stop (the program got SIGSTOP/SIGTSTP): with PTRACE_SEIZE, PTRACE_LISTEN leaves
      // it stopped like an untraced process until SIGCONT, yet still lets us see events.
      ptrace(PTRACE_LISTEN, t.tid, nullptr, nullptr);
      t.stopped = false;
    } else {
      resume(t, 0);  // a new thread's first stop, or the end of a PTRACE_LISTEN
    }
    return;
  }
  if (event != 0) {
    handle_event(t, event);
    return;
  }
  if (sig == SIGTRAP) {
    handle_trap(t);
    return;
  }
  // Signal-delivery-stop: the program's own signal, passed on unchanged. During a step over
  // a breakpoint it waits, so the handler does not run with the original byte in place.
  if (t.stepping != 0) {
    t.deferred_signal = sig;
    ptrace(PTRACE_SINGLESTEP, t.tid, nullptr, nullptr);
    t.stopped = false;
    return;
  }
  resume(t, sig);
}

void Tracer::handle_event(ThreadState& t, int event) {
  if (event == PTRACE_EVENT_CLONE || event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
    unsigned long child = 0;
    if (ptrace(PTRACE_GETEVENTMSG, t.tid, nullptr, &child) == 0)
      handle_new_task(t, static_cast<pid_t>(child), event);
    resume(t, 0);
    return;
  }
  if (event == PTRACE_EVENT_EXEC) {
    handle_exec(t);
    return;
  }
  resume(t, 0);
}

void Tracer::handle_new_task(ThreadState& parent, pid_t child, int event) {
  ThreadState* nt = nullptr;
  if (event == PTRACE_EVENT_FORK) {
    // The child has a copy of the parent's memory, int3 bytes included: it must be either
    // monitored with a copy of the breakpoint table or cleaned before it runs.
    Process& pp = *parent.proc;
    auto np = std::make_unique<Process>();
    np->pid = child;
    np->exe = pp.exe;
    np->units = pp.units;
    np->modules = pp.modules;
    np->bps = pp.bps;
    np->retired = pp.retired;
    np->image_ready = pp.image_ready;
    np->release = !options_.follow_fork;
    if (auto mem = TraceeMemory::open(child)) np->mem = std::move(mem).value();
    nt = add_thread(*np, child);
    processes_.push_back(std::move(np));
  } else {
    // A thread, or a vfork child, which shares the parent's memory until it execs.
    nt = add_thread(*parent.proc, child);
  }
  if (parked_.erase(child) > 0) {
    nt->stopped = true;
    if (nt->proc->release)
      release_process(*nt->proc);
    else
      resume(*nt, 0);
  }
}

void Tracer::release_process(Process& p) {
  // Only the forking thread exists in the child. Bytes of breakpoints another parent thread
  // was stepping over were already original at the fork.
  for (auto& [addr, bp] : p.bps)
    if (bp.armed) p.mem.write(addr, &bp.orig, 1);
  for (auto& t : p.threads) {
    if (!t->alive) continue;
    ptrace(PTRACE_DETACH, t->tid, nullptr, nullptr);
    drop_thread(*t);
  }
  p.image_ready = false;
}

void Tracer::drop_thread(ThreadState& t) {
  t.alive = false;
  live_.erase(t.tid);
}

void Tracer::handle_exec(ThreadState& t) {
  Process& p = *t.proc;
  if (!p.image_ready && t.tid == p.pid) {  // the launched program's own exec
    setup_image(p);
    resume(t, 0);
    return;
  }
  // After exec only the execing thread is left, and it has taken the thread-group id; the
  // other threads are gone (their exits may or may not be reported).
  if (t.tid != p.pid) {
    // A vfork child (it shared the parent's memory until now), or a non-leader thread that
    // exec'd. In the first case it is a new process with a fresh image.
    drop_thread(t);
    if (options_.follow_fork && options_.follow_exec) {
      auto np = std::make_unique<Process>();
      np->pid = t.tid;
      ThreadState* nt = add_thread(*np, t.tid);
      processes_.push_back(std::move(np));
      setup_image(*processes_.back());
      resume(*nt, 0);
    } else {
      ptrace(PTRACE_DETACH, t.tid, nullptr, nullptr);
    }
    return;
  }
  finish_image(p, "exec");
  for (auto& other : p.threads)
    if (other.get() != &t && other->alive) drop_thread(*other);
  if (options_.follow_exec) {
    for (auto& other : p.threads) {
      other->hits.clear();
      other->total_ns.clear();
      other->self_ns.clear();
      other->active.clear();
      other->frames.clear();
    }
    setup_image(p);
    resume(t, 0);
  } else {
    ptrace(PTRACE_DETACH, t.tid, nullptr, nullptr);
    drop_thread(t);
  }
}

void Tracer::handle_exit(ThreadState& t, int status) {
  Process& p = *t.proc;
  if (options_.timing) pop_frames(t, UINT64_MAX, now_ns(), 0);
  if (t.stepping != 0) finish_step(t);
  drop_thread(t);
  // With ptrace, a thread-group leader's exit is reported after all its other threads'.
  if (t.tid == p.pid) finish_image(p, describe_end(status));
  if (t.tid == root_) record_root_exit(status);
}

void Tracer::finish_image(Process& p, const std::string& end) {
  if (!p.image_ready) return;
  p.image_ready = false;
  ImageResult r;
  r.pid = p.pid;
  r.exe = p.exe;
  r.end = end;
  r.stops = p.stops;
  r.emulated = p.emulated;
  r.stepped = p.stepped;
  r.breakpoints = p.bps.size();
  r.units.resize(p.units.size());
  for (size_t u = 0; u < p.units.size(); ++u) r.units[u].unit = p.units[u];
  for (const auto& t : p.threads) {
    bool any = false;
    for (size_t u = 0; u < t->hits.size(); ++u) {
      if (t->hits[u] == 0) continue;
      any = true;
      r.units[u].hits += t->hits[u];
      r.units[u].threads.push_back({t->tid, t->hits[u]});
    }
    for (size_t u = 0; u < t->total_ns.size(); ++u) {
      r.units[u].total_ns += t->total_ns[u];
      r.units[u].self_ns += t->self_ns[u];
    }
    if (any) ++r.threads;
  }
  outcome_.images.push_back(std::move(r));
  p.stops = p.emulated = p.stepped = 0;
}

MonitorOutcome Tracer::take_outcome() {
  // Processes still traced when monitoring ended (detached) report what they have.
  for (auto& p : processes_)
    if (!p->release) finish_image(*p, outcome_.detached ? "detached" : "untraced");
  return std::move(outcome_);
}

}  // namespace callmon::monitor
