// The program-like work of the overlap calibration (calibration.cpp, "overlap"): a leaf
// that runs a chain of dependent multiply-adds, called 16 times per round by two parents,
// one feeding each call's result to the next (serial) and one making independent calls
// whose chains the CPU may run side by side (parallel). The same code is built three ways:
// with -finstrument-functions (calibration_probe.cpp), with -pg -mfentry
// (calibration_probe_pg.cpp) and without instrumentation (calibration_plain.cpp), and the
// compensated times of the first two are held against the plain one's.
#pragma once

#include <cstdint>

#include "runtime/calibration/probe_cost.hpp"

// 48 multiply-adds, each needing the one before: ~130 ticks of work whose end an unordered
// clock read does not wait for.
#define CALLMON_CALIBRATION_CHAIN(x)                                        \
  do {                                                                     \
    for (int i_ = 0; i_ < 48; ++i_) {                                      \
      x = x * 6364136223846793005u + 1442695040888963407u;                 \
      asm("" : "+r"(x)); /* one multiply-add per step, never folded */    \
    }                                                                      \
  } while (0)

// The parents' loops, for each build: `leaf` is that build's chain leaf.
#define CALLMON_CALIBRATION_PARENTS(serial, parallel, leaf)                 \
  __attribute__((noinline, visibility("hidden"))) uint64_t serial(uint64_t x) { \
    for (int i = 0; i < ::callmon::rt::kCalibrationLeaves; ++i) x = leaf(x); \
    return x;                                                              \
  }                                                                        \
  __attribute__((noinline, visibility("hidden"))) uint64_t parallel(uint64_t x) { \
    uint64_t s = 0;                                                        \
    for (int i = 0; i < ::callmon::rt::kCalibrationLeaves; ++i) s ^= leaf(x + i); \
    return s;                                                              \
  }

namespace callmon::rt {

uint64_t calibration_chain_leaf(uint64_t x);
uint64_t calibration_serial(uint64_t x);
uint64_t calibration_parallel(uint64_t x);
uint64_t calibration_pg_chain_leaf(uint64_t x);
uint64_t calibration_pg_serial(uint64_t x);
uint64_t calibration_pg_parallel(uint64_t x);
uint64_t calibration_plain_chain_leaf(uint64_t x);
uint64_t calibration_plain_serial(uint64_t x);
uint64_t calibration_plain_parallel(uint64_t x);

}  // namespace callmon::rt
