// What splitting one thread's walk in two would buy, as an upper bound (docs/report.md,
// "Splitting one thread"): the walk `report` does of a recording's first thread
// (walk_thread with a ProfileSink: the decoder runs ahead on the second core) against the
// same thread read as two ranges of chunks (ThreadReader::restrict_chunks), each decoded
// and walked inline on its own core. The later range is walked from an empty stack with
// its own clock, so its figures are NOT the serial ones (bench/split_clock.cpp says how
// many differ), and nothing is merged: the time is a bound, the cost of the merge left
// out. Built and run by bench/split_clock.sh.
//
//   split_walk_bound RECORDING [ROUNDS] [FRACTION_OF_CHUNKS_IN_THE_FIRST_RANGE]
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "analysis/call_walk.hpp"
#include "analysis/compensation.hpp"
#include "analysis/flat_profile.hpp"
#include "format/recording.hpp"

namespace {

using namespace callmon;

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// CPU seconds of the calling thread: under load, the wall time is mostly the other
// programs'; on an idle machine a walk lasts about as long as its busiest thread's CPU.
double thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Walks chunks [first, end) of the thread inline (or the whole thread as report does, when
// `whole`); returns the calls counted and adds the calling thread's CPU seconds to `cpu`.
uint64_t walk(const format::ProcessRecording& proc, const format::ThreadFile& tf,
              const format::ModuleLifetimes& lifetimes, bool whole, uint64_t first,
              uint64_t end, double& cpu) {
  const double cpu0 = thread_cpu();
  auto reader = format::ThreadReader::open(tf.path);
  if (!reader) {
    std::fprintf(stderr, "split_walk_bound: %s\n", reader.error().c_str());
    std::exit(1);
  }
  reader->use_module_lifetimes(lifetimes);
  analysis::ProfileSink sink;
  analysis::CallWalker<analysis::ProfileSink> walker(sink);
  analysis::apply_compensation(walker, proc, tf, true);
  auto no_progress = [](uint64_t) {};
  if (whole) {
    analysis::walk_thread(*reader, walker, no_progress);
  } else {
    reader->restrict_chunks(first, end);
    analysis::walk_thread_inline(*reader, walker, no_progress);
  }
  cpu += thread_cpu() - cpu0;
  return sink.calls();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: split_walk_bound RECORDING [ROUNDS] [FRACTION]\n");
    return 1;
  }
  auto rec = format::open_recording(argv[1]);
  if (!rec || rec->processes.empty() || rec->processes[0].threads.empty()) {
    std::fprintf(stderr, "split_walk_bound: no thread in %s\n", argv[1]);
    return 1;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  const double fraction = argc > 3 ? std::atof(argv[3]) : 0.5;
  const auto& proc = rec->processes[0];
  const auto& tf = proc.threads[0];
  format::ModuleLifetimes lifetimes(proc.meta.modules);
  auto probe = format::ThreadReader::open(tf.path);
  if (!probe) return std::fprintf(stderr, "split_walk_bound: %s\n", probe.error().c_str()), 1;
  const uint64_t chunks = probe->chunk_count();
  const auto cut = static_cast<uint64_t>(static_cast<double>(chunks) * fraction);
  std::printf("%llu chunks, cut at chunk %llu\n", static_cast<unsigned long long>(chunks),
              static_cast<unsigned long long>(cut));
  // serial_walk_cpu: the walk's thread (the decoder's is apart); split_cpu: each range's.
  std::printf("%-5s %9s %9s %15s %17s %11s  load average\n", "round", "serial_s", "split_s",
              "serial_walk_cpu", "split_cpu_a/b", "calls");
  for (int r = 1; r <= rounds; ++r) {
    const double t0 = seconds();
    double serial_cpu = 0, cpu_a = 0, cpu_b = 0;
    const uint64_t serial = walk(proc, tf, lifetimes, true, 0, 0, serial_cpu);
    const double t1 = seconds();
    uint64_t later = 0;
    std::thread other([&] { later = walk(proc, tf, lifetimes, false, cut, UINT64_MAX, cpu_b); });
    const uint64_t earlier = walk(proc, tf, lifetimes, false, 0, cut, cpu_a);
    other.join();
    const double t2 = seconds();
    char load[64] = "?";
    if (FILE* f = std::fopen("/proc/loadavg", "r")) {
      if (!std::fgets(load, sizeof load, f)) load[0] = 0;
      std::fclose(f);
    }
    if (serial != earlier + later) std::printf("(the ranges counted other calls)\n");
    std::printf("%-5d %9.3f %9.3f %15.3f %8.3f/%-8.3f %11llu  %s", r, t1 - t0, t2 - t1,
                serial_cpu, cpu_a, cpu_b, static_cast<unsigned long long>(serial), load);
  }
  return 0;
}
