// Clock selection and TSC calibration for the runtime.
#include "runtime/core/clock.hpp"

#include "callmon/format/records.hpp"

#include <fcntl.h>
#include <immintrin.h>
#include <string.h>
#include <unistd.h>

namespace callmon::rt {

bool g_clock_tsc = false;
bool g_clock_fenced = false;
uint32_t g_tick_shift = 0;

namespace {

// The TSC is usable for durations when the kernel reports it constant (same rate at every
// P-state) and non-stop (keeps counting in deep C-states). Read from /proc/cpuinfo's first
// "flags" line, which is enough: the kernel only sets them when all CPUs agree.
bool tsc_is_invariant() {
  int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  static char buf[16384];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  const char* flags = strstr(buf, "\nflags");
  if (!flags) return false;
  const char* eol = strchr(flags + 1, '\n');
  size_t len = eol ? static_cast<size_t>(eol - flags) : strlen(flags);
  auto has = [&](const char* word) {
    size_t wl = strlen(word);
    for (const char* p = flags; p + wl <= flags + len; ++p) {
      if (memcmp(p, word, wl) == 0 && (p[-1] == ' ') && (p[wl] == ' ' || p[wl] == '\n'))
        return true;
    }
    return false;
  };
  return has("constant_tsc") && has("nonstop_tsc");
}

// Measures the TSC rate over about 2 ms against CLOCK_MONOTONIC.
double calibrate_tsc() {
  uint64_t m0 = monotonic_ns(), t0 = __rdtsc();
  uint64_t m1 = m0, t1 = t0;
  while (m1 - m0 < 2000000) {
    m1 = monotonic_ns();
    t1 = __rdtsc();
  }
  return static_cast<double>(t1 - t0) * 1e9 / static_cast<double>(m1 - m0);
}

// The clock's step as a power of two: the trailing zero bits that the differences between
// 64 readings, taken at irregular intervals (a varying number of pauses between them, so
// that readings a fixed number of ticks apart cannot share their low bits by chance), all
// have. Differences, not readings: a VM's scaled TSC counts by 2 from an offset per CPU
// that may be odd (the readings of one CPU odd, of the other even). Bare metal counts by 1
// and gets 0. A wrong guess costs bytes, not data: the writer falls back to ticks for a
// delta that is no multiple of the step (one moving between CPUs, say).
uint32_t measure_tick_shift() {
  const uint64_t first = read_ticks();
  uint64_t bits = 0;
  for (unsigned i = 1; i <= 64; ++i) {
    for (unsigned k = (i * 7919u) % 23u; k > 0; --k) _mm_pause();
    bits |= read_ticks() - first;
  }
  uint32_t shift = bits ? static_cast<uint32_t>(__builtin_ctzll(bits)) : 0;
  return shift < format::kMaxTickShift ? shift : format::kMaxTickShift;
}

}  // namespace

double setup_clock(const char* option, double tsc_hz_hint) {
  bool fenced = strcmp(option, "tsc-fenced") == 0;
  bool want_tsc = fenced || strcmp(option, "tsc") == 0 ||
                  (strcmp(option, "monotonic") != 0 && tsc_is_invariant());
  g_clock_tsc = want_tsc;
  g_clock_fenced = fenced;
  g_tick_shift = measure_tick_shift();
  if (!want_tsc) return 1e9;
  return tsc_hz_hint > 0 ? tsc_hz_hint : calibrate_tsc();
}

}  // namespace callmon::rt
