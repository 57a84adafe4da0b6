// The overlap calibration's work without instrumentation (calibration_work.hpp): what the
// instrumented copies in calibration_probe*.cpp cost a program that is not recorded.
#include "runtime/calibration/calibration_work.hpp"

namespace callmon::rt {

__attribute__((noinline, visibility("hidden"))) uint64_t calibration_plain_chain_leaf(uint64_t x) {
  CALLMON_CALIBRATION_CHAIN(x);
  return x;
}

CALLMON_CALIBRATION_PARENTS(calibration_plain_serial, calibration_plain_parallel,
                            calibration_plain_chain_leaf)

}  // namespace callmon::rt

// The library function of the library-call calibration (arch/x86_64/libcall_calib.S): empty
// and uninstrumented, as a library's function is; what its recorded calls take is the
// library-call probe's own cost.
extern "C" __attribute__((noinline, visibility("hidden"))) void callmon_calibration_plain_leaf() {
  asm volatile("");
}
