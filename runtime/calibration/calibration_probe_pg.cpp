// The probe functions of the start-up calibration for the -pg modes (calibration.cpp):
// compiled with -pg -mfentry, so each call goes through the __fentry__ entry trampoline and
// returns through the exit trampoline exactly as a program's does. The mcount trampoline
// differs only in how it finds the return slot; its cost is taken to be the same.
#include "runtime/calibration/calibration.hpp"
#include "runtime/calibration/calibration_work.hpp"

namespace callmon::rt {

__attribute__((noinline, visibility("hidden"))) void calibration_pg_leaf() { asm volatile(""); }

__attribute__((noinline, visibility("hidden"))) void calibration_pg_parent() {
  for (int i = 0; i < kCalibrationLeaves; ++i) calibration_pg_leaf();
}

__attribute__((noinline, visibility("hidden"))) uint64_t calibration_pg_chain_leaf(uint64_t x) {
  CALLMON_CALIBRATION_CHAIN(x);
  return x;
}

// The library-call calibration's parent: its leaves are library calls (libcall_calib.S).
__attribute__((noinline, visibility("hidden"))) void calibration_pg_libcall_parent() {
  for (int i = 0; i < kCalibrationLeaves; ++i) callmon_calib_libcall_plt();
}

CALLMON_CALIBRATION_PARENTS(calibration_pg_serial, calibration_pg_parallel,
                            calibration_pg_chain_leaf)

}  // namespace callmon::rt
