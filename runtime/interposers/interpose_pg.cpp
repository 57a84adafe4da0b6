// What the -pg modes change around the program, put right:
//
// - Stack walkers. The entry trampolines replace return addresses with the exit
//   trampoline's, which an unwinder cannot see through. backtrace() and _Unwind_Backtrace
//   get the real addresses put back for the walk (exceptions: see note_throw/note_catch).
//   glibc's backtrace() reaches libgcc's _Unwind_Backtrace through its own dlopen handle,
//   not through symbol lookup, which is why backtrace itself is interposed too.
// - gprof. A program linked with -pg calls __monstartup at start-up (which starts a SIGPROF
//   profiling timer) and registers _mcleanup, which writes gmon.out at exit. Under
//   `callmon record` mcount is ours, so that gmon.out would have a histogram and no call
//   arcs, and would overwrite the user's last real one: both are skipped while recording
//   (no timer, no gmon.out). Without CALLMON_DIR everything goes to glibc, mcount included.
#include <dlfcn.h>

#include <cstdint>

#include "runtime/hooks/hooks.hpp"
#include "runtime/interposers/interpose.hpp"
#include "runtime/monitor/monitor_dispatch.hpp"
#include "runtime/core/options.hpp"

using namespace callmon::rt;

extern "C" uintptr_t callmon_pg_forward_mcount;
extern "C" uintptr_t callmon_pg_forward_fentry;

#define CALLMON_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// Recording or a monitor: either way mcount and __fentry__ are ours.
bool recording_requested() {
  const char* dir = read_options().dir;
  return (dir != nullptr && dir[0] != '\0') || monitor_requested();
}

}  // namespace

namespace callmon::rt {

void pg_setup_forwarding() {
  if (recording_requested()) return;
  callmon_pg_forward_mcount = g_real.mcount_;
  callmon_pg_forward_fentry = g_real.fentry_;
}

}  // namespace callmon::rt

// Both walkers start with the frame that called them, which is now the interposer's; the
// program must see its own first, so that one entry is dropped.
CALLMON_EXPORT int backtrace(void** buffer, int size) {
  resolve_real_functions();
  if (!g_real.backtrace_ || size <= 0) return 0;
  constexpr int kLocal = 256;
  void* local[kLocal + 1];
  pg_restore_returns();
  int n;
  if (size <= kLocal) {
    n = g_real.backtrace_(local, size + 1);
    for (int i = 1; i < n; ++i) buffer[i - 1] = local[i];
  } else {
    // Rare: the deepest frame is lost when the stack is deeper than `size`.
    n = g_real.backtrace_(buffer, size);
    for (int i = 1; i < n; ++i) buffer[i - 1] = buffer[i];
  }
  pg_hijack_returns();
  return n > 0 ? n - 1 : 0;
}

namespace {

struct TraceSkip {
  _Unwind_Trace_Fn trace;
  void* arg;
  bool skipped;
};

_Unwind_Reason_Code skip_first(_Unwind_Context* ctx, void* p) {
  auto* t = static_cast<TraceSkip*>(p);
  if (!t->skipped) {
    t->skipped = true;
    return _URC_NO_REASON;
  }
  return t->trace(ctx, t->arg);
}

}  // namespace

CALLMON_EXPORT _Unwind_Reason_Code _Unwind_Backtrace(_Unwind_Trace_Fn trace, void* arg) {
  // libgcc_s may have been loaded after start-up (dlopen), hence the late look-up.
  if (!g_real.unwind_backtrace)
    g_real.unwind_backtrace = reinterpret_cast<decltype(g_real.unwind_backtrace)>(
        dlsym(RTLD_NEXT, "_Unwind_Backtrace"));
  if (!g_real.unwind_backtrace) return _URC_FATAL_PHASE1_ERROR;
  TraceSkip t{trace, arg, false};
  pg_restore_returns();
  _Unwind_Reason_Code r = g_real.unwind_backtrace(skip_first, &t);
  pg_hijack_returns();
  return r;
}

CALLMON_EXPORT void __monstartup(unsigned long low_pc, unsigned long high_pc) {
  if (recording_requested()) return;
  resolve_real_functions();
  if (g_real.monstartup_) g_real.monstartup_(low_pc, high_pc);
}

CALLMON_EXPORT void _mcleanup() {
  if (recording_requested()) return;
  resolve_real_functions();
  if (g_real.mcleanup_) g_real.mcleanup_();
}
