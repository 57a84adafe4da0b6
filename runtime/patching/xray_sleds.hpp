// The XRay mode (docs/modes.md, "XRay sleds"): a program built with clang's
// -fxray-instrument carries an 11-byte sled at every function's entry, at every `ret` and
// before every tail call, listed in its `xray_instr_map` (callmon/format/xray_map.hpp). Under
// `callmon record` the runtime, not compiler-rt's XRay runtime, rewrites the sleds of the
// selected functions into calls of its own trampolines (arch/x86_64/xray_trampolines.S):
// the entry and tail sleds call them, the exit sleds jump to the exit trampoline, which
// returns to the function's caller. No return address is redirected, so the calls cost what
// -finstrument-functions ones do and follow that mode's rules (hooks_cyg.cpp).
#pragma once

#include <cstdint>

#include "runtime/patching/sled_elf.hpp"

// The functions' addresses by the id a patched sled loads into r10d (0 is no function):
// read by the trampolines. Null until the first module with sleds is patched.
extern "C" uintptr_t* callmon_xray_fns;

namespace callmon::rt {

struct XrayPatchStats {
  unsigned functions;   // functions whose sleds were patched in this pass
  unsigned unselected;  // functions a record-time filter left alone
  unsigned refused;     // sleds holding neither XRay's bytes nor ours
  uintptr_t first_refused;
  const char* failure;  // why the module's sleds (or the rest of them) were left, or nullptr
};

// Patches the sleds of module `m` (sled_read_module found its table) whose function
// sled_select() takes; sleds patched already (ours) are left as they are. Called by the
// sled pass (sled_patch.cpp), under its lock, after sled_select_module(): `startup` as
// set_code_writable's write_only_ok. Sleds are rewritten so that a thread running through
// one sees the compiled sled or the patched one, never a mix (the 9 bytes behind the first
// two first, then those two in one store).
void xray_patch_module(const SledModule& m, bool startup, XrayPatchStats* st);

// Whether any sled was patched in this process.
bool xray_patched_any();

// The XRay calibration's functions (arch/x86_64/xray_calib.S) at the reserved ids
// CALLMON_XRAY_CALIB_ID0.. (calibration/xray_calib_ids.h), so the trampolines record them.
// False when the id table cannot be mapped or n is too large.
bool xray_set_calibration_fns(const uintptr_t* fns, unsigned n);

// Functions whose sleds were patched, and sleds refused (neither XRay's bytes nor ours), in
// this process so far (since the last xray_counts_restart): the `xray-sleds` meta line
// (docs/format.md).
unsigned xray_function_count();
unsigned xray_refused_count();

// `callmon record -p`, before an attach lists its sleds: the counts start again from 0, so
// each attach's meta file counts what that attach patched (as a start-up's does).
void xray_counts_restart();

}  // namespace callmon::rt
