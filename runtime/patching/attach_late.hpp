// Attach: the sites of late modules that only the tool can write (docs/patching.md, "Modules
// loaded while attached", "The late stop"). A module loaded behind the wrappers' back may
// already run in any thread when a pass finds it, so the pass writes in-process only what a
// single store changes (attach_dlopen.cpp, safe_late). The rest — gcc's five 1-byte-nop
// sleds, `--patch` function entries — is queued here: kept in the attach's list (so the
// detach undoes whatever of it was written) but never written by the runtime; posted to the
// tool through DlSync (late, late_count, late_state 1) with the modules kept mapped (one
// reference each); the tool stops every thread, writes them as the attach does, marks what
// it left (len 0) and says it is done (late_state 2); the next pass folds that in. Each site
// has one writer: the pass writes the safe ones, the tool the posted ones. Every function
// here runs under attach_dlopen.cpp's lock.
#pragma once

#include <cstdint>

#include "callmon/attach_abi.hpp"
#include "runtime/patching/attach_sites.hpp"

namespace callmon::rt {

// A new attach session: nothing queued or posted (the last detach folded everything).
void attach_late_reset(attach_abi::DlSync* sync);

// A late pass is about to list `--patch` entries: their meta lines wait for the tool's
// answer (patch-fn only for the jumps it wrote).
void attach_late_hold_meta();

// Queues `p` (already appended to the attach's list, not written) for the tool. False when
// the queue is full: the caller leaves it unwritten and drops it from the list.
bool attach_late_queue(const attach_abi::Patch& p);

// A module with queued sites: its reference (ModulePins::keep) is dropped once the tool has
// answered. False when the table is full: the caller drops the sites of that module.
bool attach_late_keep(void* handle);

// After a pass: posts what is queued when nothing is posted, or lets the held meta lines go
// when nothing is queued or posted.
void attach_late_post(attach_abi::DlSync* sync);

// At each pass and at the detach's freeze: when the tool has answered (late_state 2), or
// always when `detaching` (a posted batch the tool never took is not written), folds the
// answer in: the sites it left are removed from `sites`, the entry lines corrected
// (patch-refused for the jumps not written), a `late-stop WRITTEN LEFT NS` meta line, and
// the kept references handed to `drop` (up to `cap`; returns how many) for the caller to
// dlclose outside the lock. Then posts what was queued meanwhile (not when detaching: it is
// dropped from `sites` as not written).
unsigned attach_late_fold(attach_abi::DlSync* sync, AttachSites* sites, bool detaching,
                          void** drop, unsigned cap);

}  // namespace callmon::rt
