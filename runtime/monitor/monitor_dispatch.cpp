// Monitor mode (see monitor_dispatch.hpp): finding and creating the monitor, the per-thread
// monitor part, the hook branches that call it, and the C functions the public header
// (include/callmon/monitor.hpp) declares.
#include "runtime/monitor/monitor_dispatch.hpp"

#include <dlfcn.h>
#include <cerrno>
#include <sys/mman.h>
#include <unistd.h>

#include "callmon/monitor.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/recording/event_writer.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/recording/process.hpp"

extern "C" uint8_t callmon_xstate_hot_on;  // arch/x86_64/xstate_setup.cpp
#include "runtime/core/sys.hpp"

// Defined by a program or library that links a monitor in (CALLMON_MONITOR macro). Weak:
// null when nobody does. A reference from libcallmon.so also makes the linker export the
// definition from an executable, where it would otherwise not be in the dynamic table.
extern "C" __attribute__((weak, visibility("default"))) callmon::Monitor*
callmon_monitor_create_v1();

namespace callmon::rt {

struct MonitorThread {
  callmon::ThreadInfo info;
  callmon::Frame* frames;  // one per shadow-stack slot
  uint64_t frames_bytes;
  bool started;            // on_thread_start was called
  bool finished;           // on_thread_exit was called: hooks only keep the stack
  int* err;                // the thread's errno (libc's __errno_location, asked once)
};

namespace {

using Factory = callmon::Monitor* (*)();

callmon::Monitor* g_monitor = nullptr;
// Set when on_process_exit starts: other threads still running stop calling the monitor
// (a narrow race remains; docs/api.md asks monitors to lock what they share).
bool g_process_done = false;

inline bool callbacks_on(const MonitorThread* m) {
  return !m->finished && !__atomic_load_n(&g_process_done, __ATOMIC_RELAXED);
}

inline callmon::CallInfo call_info(const ThreadState* s, const Frame* f, uint64_t end) {
  const callmon::Frame& p = s->monitor->frames[f - s->stack_base];
  callmon::CallInfo ci{};
  ci.function = p.function;
  ci.call_site = p.call_site;
  ci.frame = p.frame;
  ci.hook_ticks = p.hook_ticks;
  ci.start_ticks = p.start_ticks;
  ci.end_ticks = end;
  ci.depth = static_cast<uint32_t>(f - s->stack_base) + 1;
  return ci;
}

// Lazily, from the thread's first reported hook rather than from thread_setup: by then
// t_state is set, so instrumented code the callback runs is seen as nested.
inline void ensure_started(MonitorThread* m) {
  if (m->started) return;
  m->started = true;
  g_monitor->on_thread_start(m->info);
}

}  // namespace

// The two places the per-call paths run the monitor's code, the program's: everything
// else they reach is the runtime's integer code. Out of line, with C names: the audit
// (tests/audit/fast_path_audit.py, MONITOR_CALLBACKS) lets the slow paths reached at a
// call boundary the compiler placed (Reach::kCall, hooks.hpp) call these and nothing else
// of the program's, and fails when any other hot slow path reaches them. errno is kept
// around the callbacks here: the program may read it after a call that set it (a wrapper
// returning errno), and a callback's I/O would change it. Through the address the thread's
// set-up kept: two calls of __errno_location per callback cost ~2 ns each.
extern "C" __attribute__((noinline, visibility("hidden"))) void callmon_monitor_call_enter(
    MonitorThread* m, const callmon::CallInfo* call) {
  int saved = *m->err;
  ensure_started(m);
  g_monitor->on_enter(m->info, *call);
  *m->err = saved;
}

extern "C" __attribute__((noinline, visibility("hidden"))) void callmon_monitor_call_exit(
    MonitorThread* m, const callmon::CallInfo* call, uint32_t how) {
  int saved = *m->err;
  g_monitor->on_exit(m->info, *call, static_cast<callmon::ExitKind>(how));
  *m->err = saved;
}

namespace {

void diag_load(const char* what, const char* detail) {
  char msg[4400];
  LineBuf b(msg, sizeof msg);
  b.str(what);
  if (detail) b.str(": ").str(detail);
  b.str("; the program runs unmonitored");
  diag(msg);
}

}  // namespace

bool monitor_requested() {
  const char* path = env_get("CALLMON_MONITOR");
  return (path && path[0]) || callmon_monitor_create_v1 != nullptr;
}

bool monitor_load() {
  Factory create = nullptr;
  const char* path = env_get("CALLMON_MONITOR");
  if (path && path[0]) {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      diag_load("cannot load the monitor", dlerror());
      return false;
    }
    create = reinterpret_cast<Factory>(dlsym(h, "callmon_monitor_create_v1"));
    if (!create) {
      diag_load(path, "no callmon_monitor_create_v1 (CALLMON_MONITOR in the monitor's source)");
      return false;
    }
  } else {
    create = callmon_monitor_create_v1;
  }
  if (!create) return false;
  g_monitor = create();
  if (!g_monitor) diag_load("the monitor's factory returned no monitor", nullptr);
  return g_monitor != nullptr;
}

bool monitor_mode() { return g_monitor != nullptr; }

bool monitor_thread_setup(ThreadState* s) {
  void* mem = mmap(nullptr, sizeof(MonitorThread), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return false;
  auto* m = static_cast<MonitorThread*>(mem);
  uint64_t slots = static_cast<uint64_t>(s->stack_limit - s->stack_base);
  m->frames_bytes = slots * sizeof(callmon::Frame);
  void* frames = mmap(nullptr, m->frames_bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (frames == MAP_FAILED) {
    munmap(mem, sizeof(MonitorThread));
    return false;
  }
  m->frames = static_cast<callmon::Frame*>(frames);
  m->err = &errno;  // on this thread: a thread's errno stays where it is
  m->info.tid = static_cast<int>(gettid());
  s->tid = m->info.tid;
  s->monitor = m;
  // Before the thread is monitored: from now on callmon_slow_call_hot keeps the vector
  // arguments around the callbacks (slow_call.S).
  __atomic_store_n(&callmon_xstate_hot_on, 1, __ATOMIC_RELAXED);
  s->guard |= kGuardMonitor;
  return true;
}

void monitor_after_fork_child(ThreadState* s) {
  s->tid = static_cast<int>(gettid());
  if (s->monitor) s->monitor->info.tid = s->tid;
}

void monitor_release(ThreadState* s) {
  MonitorThread* m = s->monitor;
  if (!m) return;
  munmap(m->frames, m->frames_bytes);
  munmap(m, sizeof(MonitorThread));
  s->monitor = nullptr;
}

void monitor_entered(ThreadState* s, Frame* f, uintptr_t site, uint64_t t) {
  MonitorThread* m = s->monitor;
  callmon::Frame& p = m->frames[f - s->stack_base];
  p.function = f->fn;
  p.call_site = site;
  p.frame = f->sp;
  p.hook_ticks = t;
  p.start_ticks = 0;
  if (!callbacks_on(m)) return;
  const callmon::CallInfo call = call_info(s, f, 0);
  callmon_monitor_call_enter(m, &call);
  p.start_ticks = read_ticks();  // last: the body starts after the monitor's own work
}

void monitor_end_frames(ThreadState* s, Frame* last, uint64_t t, uint32_t how) {
  MonitorThread* m = s->monitor;
  while (s->top > last) {
    Frame* f = s->top - 1;
    if (callbacks_on(m)) {
      const callmon::CallInfo call = call_info(s, f, t);
      callmon_monitor_call_exit(m, &call, how);
    }
    s->top = f;
  }
}

void monitor_enter(ThreadState* s, uintptr_t fn, uintptr_t sp, uintptr_t site) {
  uint64_t t = read_ticks();
  bool nested = guard_enter(s);
  if (!nested) {
    Frame* f = s->top;
    if (f == s->stack_limit) {
      s->overflow_depth++;  // not reported; its exit is not either
    } else {
      push_frame(s, fn, sp, 0);
      monitor_entered(s, f, site, t);
    }
  }
  guard_leave(s);
}

void monitor_exit(ThreadState* s, uintptr_t fn, uintptr_t sp) {
  uint64_t t = read_ticks();
  uint32_t g = s->guard;
  bool nested = guard_enter(s);
  if (nested) {
    guard_leave(s);
    return;
  }
  if (s->overflow_depth) {
    s->overflow_depth--;
    guard_leave(s);
    return;
  }
  // The frame this exit returns from: the innermost frame when it is `fn`'s (as on the
  // recording fast path: the exit hook's frame address may differ from the entry's), else
  // the innermost of `fn` not deeper than `sp` (deeper ones were abandoned), else the
  // innermost of `fn` at all; none: an unmatched exit.
  Frame* match = nullptr;
  Frame* any = nullptr;
  if (s->top > s->stack_base && s->top[-1].fn == fn) match = s->top - 1;
  for (Frame* f = s->top; !match && f-- > s->stack_base;) {
    if (f->fn != fn) continue;
    if (f->sp >= sp) {
      match = f;
      break;
    }
    if (!any) any = f;
  }
  if (!match) match = any;
  if (match) {
    // Frames above it were left without an exit hook (clang emits none on the exception
    // path; a longjmp we did not see).
    monitor_end_frames(s, match + 1, t, (g & kGuardUnwinding) ? kExitException : kExitUnknown);
    uint64_t depth = static_cast<uint64_t>(match - s->stack_base) + 1;
    uint32_t how = kExitNormal;
    if ((g & kGuardUnwinding) && depth <= s->throw_depth) {
      // GCC's cleanup for a frame the exception passes through.
      s->throw_depth = depth - 1;
      how = kExitException;
    }
    monitor_end_frames(s, match, t, how);
  }
  guard_leave(s);
}

void monitor_unwind_below(ThreadState* s, uintptr_t sp, format::UnwindReason reason) {
  uint64_t t = read_ticks();
  bool nested = guard_enter(s);
  Frame* f = s->top;
  while (f > s->stack_base && f[-1].sp < sp) --f;
  if (nested) s->top = f;  // a jump out of a callback: keep the stack right, report nothing
  else monitor_end_frames(s, f, t, static_cast<uint32_t>(reason));
  guard_leave(s);
}

void monitor_thread_finish(ThreadState* s) {
  MonitorThread* m = s->monitor;
  if (!m || m->finished) return;
  ErrnoSaver es;
  guard_enter(s);
  if (m->started && !__atomic_load_n(&g_process_done, __ATOMIC_RELAXED)) {
    Frame* top = s->top;
    monitor_end_frames(s, s->stack_base, read_ticks(), kExitUnfinished);
    s->top = top;
    g_monitor->on_thread_exit(m->info);
  }
  m->finished = true;
  guard_leave(s);
}

void monitor_process_finish() {
  if (!g_monitor) return;
  ThreadState* s = t_state;
  if (s) monitor_thread_finish(s);
  if (__atomic_exchange_n(&g_process_done, true, __ATOMIC_ACQ_REL)) return;
  ErrnoSaver es;
  if (s) guard_enter(s);
  g_monitor->on_process_exit();
  if (s) guard_leave(s);
}

}  // namespace callmon::rt

using namespace callmon::rt;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

CALLMON_EXPORT uint64_t callmon_ticks(void) { return read_ticks(); }

CALLMON_EXPORT const char* callmon_monitor_options(void) {
  return env_get("CALLMON_MONITOR_OPTIONS");
}

CALLMON_EXPORT double callmon_tick_frequency(void) { return g_proc.ticks_per_second; }

CALLMON_EXPORT callmon::StackView callmon_shadow_stack(void) {
  ThreadState* s = t_state;
  if (!s || !s->monitor) return {nullptr, 0};
  return {s->monitor->frames, static_cast<size_t>(s->top - s->stack_base)};
}
