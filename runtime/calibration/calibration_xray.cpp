// The XRay mode's calibration probes (arch/x86_64/xray_calib.S): which probe functions the
// calibration calls (calibration.hpp, probe_functions). A process whose XRay sleds are
// patched calls the XRay trampolines, which keep more registers than the
// -finstrument-functions hooks: measuring those instead left compensation a few ns short
// per call (docs/modes.md, "XRay sleds").
#include <cstdint>

#include "runtime/calibration/calibration.hpp"
#include "runtime/calibration/calibration_work.hpp"
#include "runtime/patching/xray_sleds.hpp"

extern "C" {
void callmon_calib_xray_leaf();
void callmon_calib_xray_parent();
uint64_t callmon_calib_xray_chain_leaf(uint64_t x);
uint64_t callmon_calib_xray_serial(uint64_t x);
uint64_t callmon_calib_xray_parallel(uint64_t x);
}

namespace callmon::rt {

bool g_xray_hooks = false;

namespace {

// The functions' addresses at their reserved ids, once (the id table may be mapped only
// now, in a process that patched no sled yet: then g_xray_hooks is false anyway).
bool xray_probes_ready() {
  static bool ready = false;
  if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) return true;
  // In the order of the ids xray_calib.S gives them.
  const uintptr_t fns[] = {reinterpret_cast<uintptr_t>(&callmon_calib_xray_leaf),
                           reinterpret_cast<uintptr_t>(&callmon_calib_xray_parent),
                           reinterpret_cast<uintptr_t>(&callmon_calib_xray_chain_leaf),
                           reinterpret_cast<uintptr_t>(&callmon_calib_xray_serial),
                           reinterpret_cast<uintptr_t>(&callmon_calib_xray_parallel)};
  if (!xray_set_calibration_fns(fns, sizeof fns / sizeof fns[0])) return false;
  __atomic_store_n(&ready, true, __ATOMIC_RELEASE);
  return true;
}

}  // namespace

ProbeFunctions probe_functions(bool pg) {
  if (pg) return {calibration_pg_parent, calibration_pg_serial, calibration_pg_parallel};
  if (__atomic_load_n(&g_xray_hooks, __ATOMIC_ACQUIRE) && xray_probes_ready())
    return {callmon_calib_xray_parent, callmon_calib_xray_serial, callmon_calib_xray_parallel};
  return {calibration_parent, calibration_serial, calibration_parallel};
}

}  // namespace callmon::rt
