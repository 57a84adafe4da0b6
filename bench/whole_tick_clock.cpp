// What a compensated clock in whole ticks would change (docs/report.md, "Splitting one
// thread": the clock a split walk needs): walks a recording's first thread with today's
// CallWalker and with CallWalkerWT, the same walker whose probe parts are each rounded
// down or up to whole ticks by a hash of their record's own time (so that its clock never
// holds a fraction), both into a ProfileSink, and compares the per-function figures. The
// CallWalkerWT header is generated from analysis/call_walk.hpp by bench/whole_tick_clock.sh,
// which builds and runs this.
//
//   whole_tick_clock RECORDING
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "analysis/compensation.hpp"
#include "analysis/flat_profile.hpp"
#include "format/recording.hpp"
#include "whole_tick_walk.hpp"

namespace {

using namespace callmon;
using namespace callmon::analysis;

// apply_compensation's steps (it takes a CallWalker), then the walk of every record.
template <class W>
std::vector<FuncTicks> walk(const format::ProcessRecording& proc, const format::ThreadFile& tf,
                            const format::ModuleLifetimes& lifetimes) {
  auto reader = format::ThreadReader::open(tf.path);
  if (!reader) {
    std::fprintf(stderr, "whole_tick_clock: %s\n", reader.error().c_str());
    std::exit(1);
  }
  reader->use_module_lifetimes(lifetimes);
  ProfileSink sink;
  W walker(sink);
  walker.set_offcpu(&tf.offcpu);
  walker.set_clock_helper_limit(static_cast<uint64_t>(proc.meta.ticks_per_second * 5e-6));
  walker.subtract_pauses(true);
  if (std::optional<WalkCost> c = process_walk_cost(proc)) {
    walker.set_cost(*c);
    if (c->libcall_extra_outer != 0 || c->libcall_extra_inner != 0)
      walker.set_libcall_functions(&proc.meta.libcall_functions);
  }
  format::Event ev;
  while (reader->next(ev)) walker.feed(ev);
  walker.finish();
  return sink.functions();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: whole_tick_clock RECORDING\n"), 1;
  auto rec = format::open_recording(argv[1]);
  if (!rec || rec->processes.empty() || rec->processes[0].threads.empty())
    return std::fprintf(stderr, "whole_tick_clock: no thread in %s\n", argv[1]), 1;
  const auto& proc = rec->processes[0];
  const auto& tf = proc.threads[0];
  format::ModuleLifetimes lifetimes(proc.meta.modules);
  const std::vector<FuncTicks> a = walk<CallWalker<ProfileSink>>(proc, tf, lifetimes);
  const std::vector<FuncTicks> b = walk<CallWalkerWT<ProfileSink>>(proc, tf, lifetimes);
  if (a.size() != b.size()) return std::printf("other functions: a bug\n"), 1;
  uint64_t top = 0, top_b = 0, n = 0, d_total = 0, d_self = 0, d_min = 0, d_max = 0;
  for (size_t i = 0; i < a.size(); ++i) top = std::max(top, a[i].total), top_b = std::max(top_b, b[i].total);
  double sum = 0, sum_d = 0, sum_self = 0, sum_self_d = 0, worst = 0, worst_self = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].calls == 0) continue;
    ++n;
    const double dt = std::fabs(static_cast<double>(a[i].total) - static_cast<double>(b[i].total));
    const double ds = std::fabs(static_cast<double>(a[i].self) - static_cast<double>(b[i].self));
    sum += static_cast<double>(a[i].total);
    sum_d += dt;
    sum_self += std::fabs(static_cast<double>(a[i].self));
    sum_self_d += ds;
    d_total += a[i].total != b[i].total;
    d_self += a[i].self != b[i].self;
    d_min += a[i].min != b[i].min;
    d_max += a[i].max != b[i].max;
    // Functions of at least 0.1% of the longest total: the rows a reader looks at.
    if (a[i].total > top / 1000) worst = std::max(worst, dt / static_cast<double>(a[i].total));
    if (a[i].self > static_cast<int64_t>(top / 1000))
      worst_self = std::max(worst_self, ds / static_cast<double>(a[i].self));
  }
  std::printf("%llu functions: total differs in %llu, self in %llu, min in %llu, max in %llu\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(d_total),
              static_cast<unsigned long long>(d_self), static_cast<unsigned long long>(d_min),
              static_cast<unsigned long long>(d_max));
  std::printf("summed |change| / summed figure: total %.4f%%, self %.4f%%\n", 100 * sum_d / sum,
              100 * sum_self_d / sum_self);
  std::printf("largest change among functions of >= 0.1%% of the longest total: total %.3f%%, "
              "self %.3f%%\n", 100 * worst, 100 * worst_self);
  std::printf("longest total: %llu ticks today, %llu in whole ticks\n",
              static_cast<unsigned long long>(top), static_cast<unsigned long long>(top_b));
  return 0;
}
