// The probe cost of the monitor path (include/callmon/monitor.hpp, docs/api.md "Probe
// cost"): on a thread of its own, rounds of an instrumented parent calling an empty
// instrumented leaf go through the runtime's hooks and the process's monitor, whose on_exit
// hands each call to calibration_sample(); the leaves' intervals and the gaps between them
// give the cost, as the runtime's start-up calibration does for recording.
#include <algorithm>
#include <thread>
#include <vector>

#include "api/probe_cost_probe.hpp"
#include "callmon/monitor.hpp"

namespace callmon {
namespace {

struct Sample {
  uintptr_t function;
  uint64_t start, end;
};

// Initial-exec: read in every on_thread_start and on_exit of a monitor, which is dlopened;
// the general-dynamic model would go through __tls_get_addr, which may allocate (and lock)
// on a thread's first access.
__thread bool t_calibrating __attribute__((tls_model("initial-exec"))) = false;
__thread std::vector<Sample>* t_samples __attribute__((tls_model("initial-exec"))) = nullptr;

// The value at share `q` (0..1) of the sorted `v` (not empty).
double quantile(std::vector<double>& v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

bool calibrating() { return t_calibrating; }

void calibration_sample(const CallInfo& call) {
  // Preallocated: a sample costs a store, not an allocation.
  if (t_samples && t_samples->size() < t_samples->capacity())
    t_samples->push_back({call.function, call.start_ticks, call.end_ticks});
}

std::optional<ProbeCost> measure_probe_cost(int rounds) {
  if (rounds < 4) rounds = 4;
  std::vector<Sample> samples;
  samples.reserve(static_cast<size_t>(rounds) * (api::kProbeCostLeaves + 1));
  std::thread worker([&] {
    t_calibrating = true;
    t_samples = &samples;
    for (int r = 0; r < rounds; ++r) api::probe_cost_parent();
    t_samples = nullptr;
  });
  worker.join();
  // Exits come innermost first: each round is the parent's 16 leaves, then the parent.
  // -finstrument-functions hooks give the function's own address.
  const auto leaf = reinterpret_cast<uintptr_t>(&api::probe_cost_leaf);
  std::vector<double> inner, gap;
  const Sample* previous = nullptr;
  for (const Sample& s : samples) {
    if (s.function != leaf) {
      previous = nullptr;  // the parent: the next leaf starts a new round
      continue;
    }
    if (s.end < s.start) continue;
    inner.push_back(static_cast<double>(s.end - s.start));
    if (previous && s.start >= previous->end)
      gap.push_back(static_cast<double>(s.start - previous->end));
    previous = &s;
  }
  // Too few: the calls did not reach the monitor (it does not call calibration_sample, or
  // the runtime does not dispatch this thread's calls).
  if (inner.size() < static_cast<size_t>(rounds) || gap.size() < static_cast<size_t>(rounds))
    return std::nullopt;
  ProbeCost c;
  c.samples = inner.size();
  c.inner_min = quantile(inner, 0);
  c.inner = quantile(inner, 0.5);
  c.inner_high = quantile(inner, 0.9);
  c.gap_min = quantile(gap, 0);
  c.gap = quantile(gap, 0.5);
  c.gap_high = quantile(gap, 0.9);
  return c;
}

}  // namespace callmon
