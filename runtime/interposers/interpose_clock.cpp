// The program's clock reads (clock_gettime, gettimeofday, time, clock): a CLOCK record for
// the innermost open call when it reads a clock, once per stretch without other records,
// so analysis knows which calls may last as long as a clock says rather than as long as
// their work takes (a loop that spins until a deadline, calling small functions: the
// probes of those functions do not lengthen it, and compensation must not shorten it by
// their cost; docs/runtime.md, "Calls bound by the clock").
//
// The runtime's own clock reads (monotonic_ns, thread_cpu_ns: clock.hpp) go straight to
// libc's function through g_real_clock_gettime, resolved with the other real functions
// (lifecycle.cpp, resolve_real_functions), so they are never taken for the program's.
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "runtime/core/clock.hpp"
#include "runtime/recording/event_writer.hpp"
#include "runtime/hooks/hooks.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/core/runtime_scope.hpp"
#include "runtime/core/sys.hpp"

using namespace callmon::rt;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

namespace callmon::rt {
int (*g_real_clock_gettime)(clockid_t, timespec*) = nullptr;  // declared in clock.hpp
}  // namespace callmon::rt

namespace {

// Before the runtime's constructor resolved libc's functions (lifecycle.cpp; a hook from an
// ifunc resolver or a preinit function): the system call, slower but the same clock.
int clock_gettime_now(clockid_t id, timespec* ts) {
  if (auto f = __atomic_load_n(&g_real_clock_gettime, __ATOMIC_RELAXED)) return f(id, ts);
  return static_cast<int>(syscall(SYS_clock_gettime, id, ts));
}

// The calling thread's innermost open call read a clock: a CLOCK record, unless nothing was
// written since the last one (the same call, reading again), no call is open, the thread
// does not record, or a hook of the thread or other work of the runtime's is running (the
// runtime's own reads: RuntimeScope).
void note_clock_read() {
  ThreadState* s = t_state;
  if (!s || in_runtime() || (s->guard & (kGuardBusyMask | kGuardStopped | kGuardMonitor)) ||
      s->top == s->stack_base || s->cur == s->clock_mark || !s->header)
    return;
  ErrnoSaver es;
  bool nested = guard_enter(s);
  write_special(s, nested, callmon::format::kCodeClock, s->last_ticks, nullptr, 0);
  guard_leave(s);
  if (!nested) s->clock_mark = s->cur;
}

}  // namespace

CALLMON_EXPORT int clock_gettime(clockid_t id, timespec* ts) {
  note_clock_read();
  return clock_gettime_now(id, ts);
}

CALLMON_EXPORT int gettimeofday(timeval* tv, void* tz) {
  note_clock_read();
  if (g_real.gettimeofday_) return g_real.gettimeofday_(tv, tz);
  return static_cast<int>(syscall(SYS_gettimeofday, tv, tz));
}

CALLMON_EXPORT time_t time(time_t* t) {
  note_clock_read();
  if (g_real.time_) return g_real.time_(t);
  return static_cast<time_t>(syscall(SYS_time, t));
}

CALLMON_EXPORT clock_t clock() {
  note_clock_read();
  if (g_real.clock_) return g_real.clock_();
  timespec ts;
  clock_gettime_now(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<clock_t>(ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
}
