// Overhead calibration: what recording costs per call, measured at start-up through the
// real hook path, so analysis can subtract it (docs/runtime.md, "Overhead compensation").
#pragma once

#include <cstdint>

#include "runtime/calibration/probe_cost.hpp"

namespace callmon::rt {

// Calls an instrumented parent and its instrumented leaf (calibration_probe.cpp) on a scratch
// thread state (no file, signals blocked) a few thousand times, decodes the records they
// wrote, and returns the typical costs. Call on a thread that is inside no hook; it
// restores the calling thread's state. `pg`: measure the -pg hooks (trampolines and return
// redirection, calibration_probe_pg.cpp) instead of the -finstrument-functions ones; not
// `pg` in a process whose XRay sleds are patched (g_xray_hooks): the XRay trampolines
// (calibration_xray.cpp).
ProbeCost calibrate_probe_cost(bool pg = false);

// The library-call probe's own cost (docs/runtime.md, "Library calls' own cost"): the same
// rounds, whose leaves are library calls through the real PLT-slot-stub path into an empty
// uninstrumented function (arch/x86_64/libcall_calib.S), under a parent instrumented like
// the process's code (`pg` as above). Fewer rounds than calibrate_probe_cost. {0, 0} when a
// slow path left no usable records.
ProbeCost calibrate_libcall_cost(bool pg);

// The calibration in the run (docs/runtime.md, "Calibrations in the run"): a short one
// (about 2 000 probe pairs) on a scratch buffer the process keeps, through the process's
// hooks (g_pg_hooks). For a slow path of a thread's hook, with nothing half-written in its
// trace. False when another thread is calibrating (this one skips its turn) or the
// calibration took a slow path.
bool calibrate_in_run(ProbeCost* out);

// calibration_probe.cpp, compiled with -finstrument-functions: an empty leaf and a parent
// that calls it kCalibrationLeaves times in a loop. calibration_probe_pg.cpp: the same,
// compiled with -pg -mfentry.
void calibration_leaf();
void calibration_parent();
void calibration_pg_leaf();
void calibration_pg_parent();
void calibration_libcall_parent();
void calibration_pg_libcall_parent();

// Set by the -pg hooks before the process's first set-up: the process uses them, so the
// calibration measures them.
extern bool g_pg_hooks;

// Set by the XRay sled pass (xray_sleds.cpp) when it patches or lists a sled: without
// g_pg_hooks, the calibration measures the XRay trampolines rather than the
// -finstrument-functions hooks.
extern bool g_xray_hooks;

// The probe functions the calibration calls: `pg`'s, else the XRay mode's when g_xray_hooks
// and their ids could be set up (calibration_xray.cpp), else -finstrument-functions'.
struct ProbeFunctions {
  void (*parent)();
  uint64_t (*serial)(uint64_t);
  uint64_t (*parallel)(uint64_t);
};
ProbeFunctions probe_functions(bool pg);

}  // namespace callmon::rt

// arch/x86_64/libcall_calib.S: the PLT-like entry of the library-call calibration's leaf.
extern "C" void callmon_calib_libcall_plt();
