// The instrumented functions measure_probe_cost() calls (probe_cost.cpp). This one file of
// libcallmon_api.a is compiled with -finstrument-functions, so its calls reach the runtime's
// hooks, and through them the process's monitor, the way a program's calls do.
#include "api/probe_cost_probe.hpp"

namespace callmon::api {

// An empty body; the asm keeps the compiler from merging or dropping it.
__attribute__((noinline, visibility("hidden"))) void probe_cost_leaf() { asm volatile(""); }

__attribute__((noinline, visibility("hidden"))) void probe_cost_parent() {
  for (int i = 0; i < kProbeCostLeaves; ++i) probe_cost_leaf();
}

}  // namespace callmon::api
