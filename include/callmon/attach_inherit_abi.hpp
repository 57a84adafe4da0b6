// Frames already open when `callmon record -p PID` attaches (docs/patching.md, "Attaching"):
// the tool (attach/attach_unwind.cpp) unwinds every stopped thread and writes, into the
// runtime's table `callmon_attach_inherit` through the program's memory, the open frames of
// instrumented functions as the shadow-stack frames the hooks would have pushed; each thread
// takes its own at its first hook of the session (runtime/patching/attach_inherit.cpp) and
// writes them as INHERIT records, as a fork child does. Plain data: both sides are x86-64 and
// built from the same tree.
#pragma once

#include <cstdint>

namespace callmon::attach_inherit_abi {

inline constexpr const char* kTableSymbol = "callmon_attach_inherit";
inline constexpr uint32_t kMaxThreads = 1024;
inline constexpr uint32_t kMaxFrames = 32768;  // all threads together

// One open frame, as the runtime's Frame (thread_state.hpp): `fn` the address an ENTER
// would hold, `sp` the frame address, `ret` the return address the tool replaced with the
// exit trampoline in the -pg modes, as their entry hook does (0: -finstrument-functions,
// whose exit hook needs none).
struct Frame {
  uint64_t fn, sp, ret;
};

struct Thread {
  int32_t tid;
  uint32_t first;  // index of its outermost frame in Table::frames
  uint32_t count;
  uint32_t taken;  // set by the runtime when the thread took its frames
};

struct Table {
  uint64_t trampoline;  // set by the runtime: the -pg modes' exit trampoline, which the tool
                        // writes in the return-address slot of each -pg frame it lists
  uint32_t session;     // the attach session these frames are for (attach_session())
  uint32_t threads;     // entries used in thread[]
  Thread thread[kMaxThreads];
  Frame frames[kMaxFrames];
  uint64_t patched_trampoline;  // set by the runtime: the exit trampoline of functions patched
                                // with --patch (keeps every call-clobbered register), which
                                // the tool writes in the return-address slot of their frames
};

}  // namespace callmon::attach_inherit_abi
