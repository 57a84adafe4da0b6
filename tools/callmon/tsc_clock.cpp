// TSC rate measurement and clock pairs (tsc_clock.hpp).
#include "tools/callmon/tsc_clock.hpp"

#include <time.h>
#include <x86intrin.h>

#include <cerrno>
#include <cstdint>

namespace callmon::tools {

namespace {

uint64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

void read_clock_pair(uint64_t& tsc, uint64_t& ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 16; ++i) {
    uint64_t a = mono_ns(), t = __rdtsc(), b = mono_ns();
    if (b - a < best) {
      best = b - a;
      tsc = t;
      ns = a + (b - a) / 2;
    }
  }
}

TscStart tsc_measure_start() {
  TscStart s;
  read_clock_pair(s.tsc, s.ns);
  return s;
}

double tsc_measure_finish(const TscStart& start, uint64_t min_span_ns) {
  uint64_t t1 = 0, n1 = 0;
  read_clock_pair(t1, n1);
  if (n1 > start.ns && n1 - start.ns < min_span_ns) {
    uint64_t left = min_span_ns - (n1 - start.ns);
    timespec pause{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
    while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
    }
    read_clock_pair(t1, n1);
  }
  if (n1 <= start.ns || t1 <= start.tsc) return 0;
  return static_cast<double>(t1 - start.tsc) * 1e9 / static_cast<double>(n1 - start.ns);
}

}  // namespace callmon::tools
