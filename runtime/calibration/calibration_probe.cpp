// The instrumented functions the start-up calibration calls (calibration.cpp). This one file
// of the runtime is compiled with -finstrument-functions, so the calls to the hooks are made
// the way a program's are: through the PLT, by a function with its own frame, arguments set
// up by the compiler. Measuring the hooks called back to back from C++ instead gave half the
// cost a real instrumented call has (see docs/runtime.md, "Overhead compensation").
#include "runtime/calibration/calibration.hpp"
#include "runtime/calibration/calibration_work.hpp"

namespace callmon::rt {

// Empty bodies; the asm keeps the compiler from merging or dropping them.
__attribute__((noinline, visibility("hidden"))) void calibration_leaf() { asm volatile(""); }

__attribute__((noinline, visibility("hidden"))) void calibration_parent() {
  for (int i = 0; i < kCalibrationLeaves; ++i) calibration_leaf();
}

__attribute__((noinline, visibility("hidden"))) uint64_t calibration_chain_leaf(uint64_t x) {
  CALLMON_CALIBRATION_CHAIN(x);
  return x;
}

// The library-call calibration's parent: its leaves are library calls (libcall_calib.S).
__attribute__((noinline, visibility("hidden"))) void calibration_libcall_parent() {
  for (int i = 0; i < kCalibrationLeaves; ++i) callmon_calib_libcall_plt();
}

CALLMON_CALIBRATION_PARENTS(calibration_serial, calibration_parallel, calibration_chain_leaf)

}  // namespace callmon::rt
