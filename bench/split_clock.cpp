// Why one thread's walk cannot be split and stitched byte for byte while a probe cost is
// compensated (docs/report.md, "Splitting one thread"): the compensated clock is a running
// floating-point sum whose fractional part at any record decides how every later call's
// times round. This walks a recording's first thread twice, the second walker's clock
// entering the stream at another fractional offset (K extra calls of 1000 ticks each, fed
// before the stream: each moves the clock by a whole number of ticks less the probes'
// estimate, a fraction), and counts the calls whose figures (time, self and their ranges)
// differ: what a later part walked without the earlier part's exact clock gets wrong. No
// extra call, or no probe cost (every step whole ticks), changes nothing. Built and run by
// bench/split_clock.sh.
//
//   split_clock RECORDING K [K...]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "analysis/call_walk.hpp"
#include "analysis/compensation.hpp"
#include "format/recording.hpp"

namespace {

using callmon::analysis::CallWalker;
using callmon::analysis::FinishedCall;

struct Figures {
  uint64_t start, time, self, self_lo, self_hi, time_lo, time_hi;
  bool operator==(const Figures&) const = default;
};

// Keeps the figures of the calls finished since the last take().
struct Collect {
  std::vector<Figures> out;
  uint32_t on_enter(uint64_t, uint64_t, uint32_t, bool) { return 0; }
  void on_call(const FinishedCall& c) {
    out.push_back({c.start, c.time, c.self, c.self_lo, c.self_hi, c.time_lo, c.time_hi});
  }
  void on_special(const callmon::format::Event&, uint32_t) {}
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: split_clock RECORDING K [K...]\n");
    return 1;
  }
  auto rec = callmon::format::open_recording(argv[1]);
  if (!rec || rec->processes.empty() || rec->processes[0].threads.empty()) {
    std::fprintf(stderr, "split_clock: no thread in %s\n", argv[1]);
    return 1;
  }
  const auto& proc = rec->processes[0];
  const auto& tf = proc.threads[0];
  callmon::format::ModuleLifetimes lifetimes(proc.meta.modules);
  for (int g = 2; g < argc; ++g) {
    const uint64_t extra = std::strtoull(argv[g], nullptr, 10);
    constexpr uint64_t kGap = 1000;
    auto reader = callmon::format::ThreadReader::open(tf.path);
    if (!reader) return std::fprintf(stderr, "split_clock: %s\n", reader.error().c_str()), 1;
    reader->use_module_lifetimes(lifetimes);
    Collect a, b;
    CallWalker<Collect> serial(a), shifted(b);
    callmon::analysis::apply_compensation(serial, proc, tf, true);
    callmon::analysis::apply_compensation(shifted, proc, tf, true);
    callmon::format::Event ev;
    uint64_t calls = 0, differ = 0;
    bool first = true;
    auto compare = [&] {
      for (size_t i = 0; i < a.out.size(); ++i) {
        ++calls;
        differ += !(a.out[i] == b.out[i]);
      }
      a.out.clear();
      b.out.clear();
    };
    while (reader->next(ev)) {
      if (first) {
        first = false;
        // The offset: `extra` calls of kGap ticks, kGap apart, ending kGap before the first
        // record.
        uint64_t t = ev.ticks > 2 * kGap * extra ? ev.ticks - 2 * kGap * extra : 0;
        for (uint64_t k = 0; k < extra; ++k, t += 2 * kGap) {
          shifted.feed_enter(t, ev.addr ^ 1);
          shifted.feed_exit(t + kGap);
        }
        b.out.clear();
      }
      serial.feed(ev);
      shifted.feed(ev);
      compare();
    }
    serial.finish();
    shifted.finish();
    compare();
    std::printf("%3llu extra calls: %llu calls, %llu with other figures (%.3f%%)\n",
                static_cast<unsigned long long>(extra), static_cast<unsigned long long>(calls),
                static_cast<unsigned long long>(differ),
                calls ? 100.0 * static_cast<double>(differ) / static_cast<double>(calls) : 0.0);
  }
  return 0;
}
