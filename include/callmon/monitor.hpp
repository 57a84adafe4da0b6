// callmon's extension API: derive from callmon::Monitor, override the callbacks you need,
// register the class with CALLMON_MONITOR(Class), build a shared library and run an
// instrumented program under it with `callmon run --monitor ./tool.so -- PROG` (or link the
// monitor into the program together with libcallmon.so). Complete guide: docs/api.md.
//
// Stable interface, version CALLMON_API_VERSION. The runtime finds a monitor by the factory
// symbol callmon_monitor_create_v<N>; any change to the Monitor class's virtual functions
// or to the layout of CallInfo, ThreadInfo or Frame makes a new N, and a runtime only loads
// the versions it knows. New free functions may be added within a version.
//
// Model (docs/api.md says more):
//  - one Monitor object per process, shared by all threads; callbacks of different threads
//    run concurrently, so the monitor synchronizes what it shares. ThreadInfo::data is a
//    per-thread slot for the monitor's own per-thread state (no locking needed there);
//  - callbacks run on the program's thread, inside the hook. Calls made by a callback (and
//    by a signal handler that interrupts one) are not reported. Callbacks may allocate,
//    lock, do I/O and call symbolize(); they must not throw (they are noexcept), longjmp
//    out, or use long double (x87 return values are not saved in the -pg modes);
//  - every on_enter gets exactly one on_exit, with the kind of exit, innermost frame first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#define CALLMON_API_VERSION 1

namespace callmon {

// How a call ended.
enum class ExitKind : uint32_t {
  kNormal = 0,      // it returned
  kException = 1,   // a C++ exception (or thread cancellation) unwound it
  kLongjmp = 2,     // a longjmp jumped over it
  kUnknown = 3,     // it was left without its exit hook and the runtime saw no cause
  kUnfinished = 4,  // still open when its thread or the process ended (exit(), pthread_exit
                    // from C code)
};

// One call. Ticks are the runtime's clock (tick_frequency() per second): rdtsc where the
// TSC is invariant, else CLOCK_MONOTONIC nanoseconds.
struct CallInfo {
  uintptr_t function;    // the function's address (in the -pg modes: its mcount/__fentry__
                         // call, inside the function; symbolize() maps both to the function)
  uintptr_t call_site;   // the return address in the caller (0 if unknown)
  uintptr_t frame;       // the frame address the runtime matches exits with (deeper calls:
                         // smaller values)
  uint64_t hook_ticks;   // when the entry hook was reached
  uint64_t start_ticks;  // when the body started: after the runtime's and on_enter's work
                         // (0 in on_enter: not known yet)
  uint64_t end_ticks;    // when the exit was seen (0 in on_enter)
  uint32_t depth;        // 1 for the outermost open call of the thread
  uint32_t reserved;
};

// A thread as the monitor sees it, from its first instrumented call to its end.
struct ThreadInfo {
  int tid;     // kernel thread id
  void* data;  // the monitor's own: null at on_thread_start; the runtime never touches it
};

// One open call on the current thread's shadow stack (the fields of CallInfo it knows).
struct Frame {
  uintptr_t function;
  uintptr_t call_site;
  uintptr_t frame;
  uint64_t hook_ticks;
  uint64_t start_ticks;  // 0 while its on_enter is running
};

// The current thread's open calls, outermost first. Valid until the callback returns.
struct StackView {
  const Frame* frames;
  size_t size;
  const Frame* begin() const { return frames; }
  const Frame* end() const { return frames + size; }
  bool empty() const { return size == 0; }
  const Frame& operator[](size_t i) const { return frames[i]; }
};

// Derive from this. All callbacks have empty defaults. The runtime creates the object once
// per process through the CALLMON_MONITOR factory and never destroys it: do final work in
// on_process_exit.
class Monitor {
 public:
  virtual ~Monitor() = default;
  // The thread's first instrumented call is about to be reported (threads that call no
  // instrumented function are never seen).
  virtual void on_thread_start(ThreadInfo& /*thread*/) noexcept {}
  // A call started; call.start_ticks and call.end_ticks are 0. The call is the innermost
  // frame of shadow_stack().
  virtual void on_enter(ThreadInfo& /*thread*/, const CallInfo& /*call*/) noexcept {}
  // A call ended; it is still the innermost frame of shadow_stack().
  virtual void on_exit(ThreadInfo& /*thread*/, const CallInfo& /*call*/,
                       ExitKind /*how*/) noexcept {}
  // The thread is ending (after on_exit kUnfinished for calls still open).
  virtual void on_thread_exit(ThreadInfo& /*thread*/) noexcept {}
  // The process is exiting through exit() or a return from main, on the exiting thread,
  // after its on_thread_exit. Not called when the process is killed by a signal or
  // _exit()s. After a fork the child has a copy of the monitor and calls this too.
  virtual void on_process_exit() noexcept {}
};

}  // namespace callmon

// Provided by libcallmon.so (the runtime).
extern "C" {
uint64_t callmon_ticks(void);
double callmon_tick_frequency(void);
callmon::StackView callmon_shadow_stack(void);
// CALLMON_MONITOR_OPTIONS as the process started with it (the runtime takes callmon's
// variables out of the program's environment), or null.
const char* callmon_monitor_options(void);
}

namespace callmon {

// The runtime's clock now, and its ticks per second.
inline uint64_t ticks() { return callmon_ticks(); }
inline double tick_frequency() { return callmon_tick_frequency(); }
// Converts a tick difference to nanoseconds.
inline double ticks_to_ns(uint64_t t) { return static_cast<double>(t) * 1e9 / tick_frequency(); }

// The calling thread's open calls (empty outside a callback on a thread the runtime knows).
inline StackView shadow_stack() { return callmon_shadow_stack(); }

// What an address is, from the ELF symbol tables and DWARF of the module that holds it.
struct Symbol {
  std::string name;    // demangled; "module+0xoff" or "0x<addr>" when unknown
  std::string module;  // path of the module, empty if none
  std::string file;    // source file of the function, empty if unknown
  unsigned line = 0;   // its line, 0 if unknown
  bool known = false;  // a function symbol covered the address
  std::string symbol;  // the name as the symbol table spells it (mangled), empty if unknown
};

// Symbolizes `address` (thread-safe; cached; reads files on first use, so costs
// microseconds to milliseconds the first time). In libcallmon_api.a: link it into the
// monitor together with -ldw -lelf.
Symbol symbolize(uintptr_t address);

// ---- Probe cost (docs/api.md, "Probe cost"); in libcallmon_api.a ----
// What the runtime's hooks and this monitor's own callbacks add to each call, in ticks, so
// that a monitor can take it out of the times it shows as `callmon report` does. `inner` is
// the part inside a call's [start_ticks, end_ticks]; `gap` the part outside it that its
// caller's interval holds (a callee costs its caller its interval plus `gap`). Each is
// given at its cheapest (min), typical (median) and at the 90th percentile (high): the true
// cost of a call lies between min and, but for rare disturbances, high.
struct ProbeCost {
  double inner = 0, inner_min = 0, inner_high = 0;
  double gap = 0, gap_min = 0, gap_high = 0;
  size_t samples = 0;  // leaf calls measured
};

// Measures the ProbeCost: on a new thread, `rounds` times, an instrumented parent calls an
// empty instrumented leaf 16 times (-finstrument-functions hooks). Those calls reach the
// monitor's callbacks like any other; on that thread calibrating() is true, and the monitor's
// on_exit must pass each call to calibration_sample() (and keep it out of its results). Call
// it from a callback (on_thread_start, say) or any thread the runtime runs, not from the
// monitor's constructor (the process is still being set up then). Blocks until done (about
// rounds x 17 calls). Nothing when too few calls came back (the monitor did not sample).
std::optional<ProbeCost> measure_probe_cost(int rounds = 500);
// True on measure_probe_cost()'s thread.
bool calibrating();
// From on_exit on that thread: records the call's ticks.
void calibration_sample(const CallInfo& call);

// A `--monitor-option KEY=VALUE` given to `callmon run` (environment variable
// CALLMON_MONITOR_OPTIONS: KEY=VALUE lines, kept by the runtime as the process started
// with it: the program's own environment no longer holds it).
inline std::optional<std::string> option(std::string_view key) {
  const char* all = callmon_monitor_options();
  if (!all) return std::nullopt;
  std::string_view rest(all);
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    size_t eq = line.find('=');
    if (eq != std::string_view::npos && line.substr(0, eq) == key)
      return std::string(line.substr(eq + 1));
  }
  return std::nullopt;
}

}  // namespace callmon

// Registers `Class` (default-constructible, derived from callmon::Monitor) as the program's
// monitor: exports the factory the runtime looks for. Once per monitor library.
#define CALLMON_MONITOR(Class)                                                      \
  extern "C" __attribute__((visibility("default"))) callmon::Monitor*                 \
  callmon_monitor_create_v1() {                                                       \
    return new Class();                                                               \
  }
