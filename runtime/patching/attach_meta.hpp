// Attach: the meta lines of `--patch` that say what was actually written (docs/patching.md,
// "Attaching"). The attach lists the function entries to patch before the stop; during the
// stop the tool may drop one (a signal handler will return into its first bytes at no
// instruction it can move) and neutralises its entry in the runtime's list (new bytes =
// old bytes). So the entry pass's `patch-fn`/`patch-module` lines are held back from the
// meta file until the stop is over, then corrected: each dropped function's `patch-fn` line
// becomes a `patch-refused` one, its module's counts follow.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/patching/attach_sites.hpp"

namespace callmon::rt {

// The reason written for a function whose jump the tool dropped.
inline constexpr const char* kDroppedReason =
    "a signal handler returns into its first bytes at no instruction callmon can move";

// Copies the complete meta lines in[0, len) to out (capacity cap): each `patch-fn ADDR NAME`
// line whose function's jump is at one of `sites` (ADDR itself, or ADDR + 4 past an
// endbr64) becomes `patch-refused ADDR NAME why`, and the next `patch-module PATCHED REFUSED
// PATH` line counts them refused rather than patched. Other lines are copied as they are.
// Returns the length written, or SIZE_MAX when `cap` is too small. Pure: unit-tested.
size_t attach_meta_drop(const char* in, size_t len, const uint64_t* sites, unsigned n,
                        const char* why, char* out, size_t cap);

// callmon_attach_start, before the set-up writes the meta file: the entry pass's lines wait.
void attach_meta_hold();

// After the tool's stop (the first hook of the session, a pass, or the detach's prestop,
// whichever comes first; once): the held lines corrected by the list's neutralised entry
// jumps, then written. Takes no lock but the meta file's append.
void attach_meta_release(const AttachSites* sites);

}  // namespace callmon::rt
