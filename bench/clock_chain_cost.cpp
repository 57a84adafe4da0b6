// What the compensated clock alone costs on the decoding thread (docs/report.md, "Splitting
// one thread", the exact alternative): CPU seconds of decoding a recording's first thread
// in runs of plain records (ThreadReader::next_plain_run, as the decoder ahead of the walk
// does), then of the same decoding with the clock's chain run over each record (the
// advance of CallWalker::advance_clock_to for plain ENTER and EXIT: the probes' parts, the
// overshoot owed per open frame, library calls' own parts; other records only pop what an
// UNWIND closes). An estimate of the clock's price, not the walker's exact clock (pauses,
// preemption, HIDDEN and calibrations in the run are left out). Built and run by
// bench/split_clock.sh.
//
//   clock_chain_cost RECORDING [ROUNDS]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "analysis/compensation.hpp"
#include "format/recording.hpp"

namespace {

using namespace callmon;

double thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The clock's chain (call_walk.hpp: advance_clock_to, enter_record, exit_record).
struct Clock {
  analysis::WalkCost cost;
  const std::vector<uint64_t>* lib = nullptr;
  double v = 0, due = 0;
  uint64_t v_ticks = 0;
  bool started = false;
  std::vector<double> owed;     // per open frame
  std::vector<uint8_t> is_lib;  // per open frame
  double enter_before[2], enter_after[2], exit_before[2], exit_after[2];
  uint64_t sum = 0;  // the clock's readings, summed: keeps the chain live
  // Branches on the usual case (nothing owed, a stretch longer than the probes' parts) so
  // that the owed carry leaves the chain of dependent steps; the same results.
  bool branchy = false;
  uint64_t overshoots = 0;  // stretches shorter than what they had to give

  void setup() {
    const double between = cost.libcall_extra_outer - cost.libcall_extra_inner;
    enter_before[0] = (cost.outer - cost.inner) / 2;
    enter_before[1] = (cost.outer - cost.inner + between) / 2;
    enter_after[0] = cost.inner / 2;
    enter_after[1] = (cost.inner + cost.libcall_extra_inner) / 2;
    exit_before[0] = cost.inner / 2;
    exit_before[1] = (cost.inner + cost.libcall_extra_inner) / 2;
    exit_after[0] = (cost.outer - cost.inner) / 2;
    exit_after[1] = (cost.outer - cost.inner + between) / 2;
    owed.reserve(1 << 16);
    is_lib.reserve(1 << 16);
  }
  bool libcall(uint64_t a) const {
    return lib && a >= lib->front() && a <= lib->back() &&
           std::binary_search(lib->begin(), lib->end(), a);
  }
  void advance(uint64_t t, double before, double after) {
    if (!started) started = true, v = static_cast<double>(t), v_ticks = t;
    double d = static_cast<double>(static_cast<int64_t>(t - std::min(t, v_ticks)));
    d -= due + before;
    due = after;
    v_ticks = std::max(v_ticks, t);
    if (branchy && d >= 0 && (owed.empty() || owed.back() == 0)) [[likely]] {
      v += d;
      return;
    }
    ++overshoots;
    if (owed.empty()) {
      v += std::max(d, 0.0);
      return;
    }
    double& o = owed.back();
    d -= o;
    o = d < 0 ? -d : 0;
    v += d > 0 ? d : 0.0;
  }
  uint64_t reading() const { return static_cast<uint64_t>(static_cast<int64_t>(v + 0.5)); }
  void enter(uint64_t t, uint64_t a) {
    const bool l = libcall(a);
    advance(t, enter_before[l], enter_after[l]);
    owed.push_back(0);
    is_lib.push_back(l);
    sum += reading();
  }
  void exit(uint64_t t) {
    const bool l = !is_lib.empty() && is_lib.back();
    advance(t, exit_before[l], exit_after[l]);
    if (owed.empty()) return;
    const double o = owed.back();
    owed.pop_back();
    is_lib.pop_back();
    if (!owed.empty() && (!branchy || o != 0)) owed.back() += o;
    sum += reading();
  }
};

// Decodes the thread, with the clock when `clock` is set; returns the thread's CPU seconds.
double run(const format::ProcessRecording& proc, const format::ThreadFile& tf,
           const format::ModuleLifetimes& lifetimes, Clock* clock, uint64_t& records,
           uint64_t& check) {
  auto reader = format::ThreadReader::open(tf.path);
  if (!reader) {
    std::fprintf(stderr, "clock_chain_cost: %s\n", reader.error().c_str());
    std::exit(1);
  }
  reader->use_module_lifetimes(lifetimes);
  constexpr size_t kRun = 256;
  uint8_t kinds[kRun];
  uint64_t ticks[kRun], addrs[kRun];
  format::Event ev;
  const double cpu0 = thread_cpu();
  for (;;) {
    size_t enters = 0;
    const size_t n = reader->next_plain_run(kinds, ticks, addrs, kRun, enters);
    records += n;
    if (clock) {
      const uint64_t* a = addrs;
      for (size_t i = 0; i < n; ++i) {
        if (kinds[i] == format::Event::kEnter)
          clock->enter(ticks[i], *a++);
        else
          clock->exit(ticks[i]);
      }
    } else {
      for (size_t i = 0; i < n; ++i) check += ticks[i];
      for (size_t i = 0; i < enters; ++i) check ^= addrs[i];
    }
    if (!reader->next(ev)) break;
    ++records;
    if (!clock) {
      check += ev.ticks;
      continue;
    }
    if (ev.type == format::Event::kEnter) {
      clock->enter(ev.ticks, ev.addr);
    } else if (ev.type == format::Event::kExit) {
      clock->exit(ev.ticks);
    } else if (ev.type == format::Event::kUnwind) {
      clock->advance(ev.ticks, 0, 0);
      for (uint64_t i = 0; i < ev.count && !clock->owed.empty(); ++i) {
        clock->owed.pop_back();
        clock->is_lib.pop_back();
      }
    }
  }
  if (clock) check += clock->sum;
  return thread_cpu() - cpu0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "usage: clock_chain_cost RECORDING [ROUNDS]\n"), 1;
  auto rec = format::open_recording(argv[1]);
  if (!rec || rec->processes.empty() || rec->processes[0].threads.empty())
    return std::fprintf(stderr, "clock_chain_cost: no thread in %s\n", argv[1]), 1;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const auto& proc = rec->processes[0];
  const auto& tf = proc.threads[0];
  format::ModuleLifetimes lifetimes(proc.meta.modules);
  std::optional<analysis::WalkCost> cost = analysis::process_walk_cost(proc);
  std::printf("%-5s %10s %10s %10s %14s %13s %15s\n", "round", "decode_s", "+clock_s",
              "+branchy_s", "decode_ns/rec", "clock_ns/rec", "branchy_ns/rec");
  for (int r = 1; r <= rounds; ++r) {
    uint64_t records = 0, check = 0;
    const double plain = run(proc, tf, lifetimes, nullptr, records, check);
    Clock clock;
    if (cost) clock.cost = *cost;
    if (cost && (cost->libcall_extra_inner != 0 || cost->libcall_extra_outer != 0) &&
        !proc.meta.libcall_functions.empty())
      clock.lib = &proc.meta.libcall_functions;
    clock.setup();
    Clock fast = clock;
    fast.branchy = true;
    uint64_t records2 = 0;
    const double with = run(proc, tf, lifetimes, &clock, records2, check);
    const double with_fast = run(proc, tf, lifetimes, &fast, records2, check);
    if (fast.sum != clock.sum) std::printf("(the branchy clock read otherwise: a bug)\n");
    const double n = static_cast<double>(records);
    std::printf("%-5d %10.3f %10.3f %10.3f %14.2f %13.2f %15.2f   (%llu records, %.2f%% overshoots)\n",
                r, plain, with, with_fast, plain / n * 1e9, (with - plain) / n * 1e9,
                (with_fast - plain) / n * 1e9, static_cast<unsigned long long>(records),
                100.0 * static_cast<double>(fast.overshoots) / n);
  }
  return 0;
}
