// Functions of a V8 embedder (node) that entry patching must leave alone because V8 reads
// their return addresses (docs/patching.md, "Refused"): those V8's generated code calls
// through an exit frame, and the functions they reach by a tail jump, which run with the
// same return address in the same slot (node's RunMicrotasks binding jumps to
// MicrotasksScope::PerformCheckpoint, which jumps to MicrotaskQueue::PerformCheckpoint).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/patching/entry_funcs.hpp"

namespace callmon::rt {

// Whether the mangled `name` is one V8's generated code calls through an exit frame: V8's
// C++ builtins and runtime functions (v8::internal::Builtin_*, Runtime_*) and the
// embedder's API callbacks (a v8::FunctionCallbackInfo or v8::PropertyCallbackInfo
// parameter).
bool is_called_by_v8_code(const char* name);

// Marks (marks[i] = 1, for funcs' i-th function) the functions called by V8's code and,
// transitively, every function one of them enters by a direct jump (a tail call,
// conditional or not). `marks` has funcs.count() bytes, zeroed. Returns how many were
// marked; 0 in a module without such functions (nothing decoded). entry_decoder_error()
// must be null.
size_t mark_v8_entered(const ModuleFunctions& funcs, uint8_t* marks);

// What names cannot find: V8's code also reaches patched functions by indirect tail jumps
// (node's RunMicrotasks binding jumps through a vtable to MicrotaskQueue::PerformCheckpoint),
// with V8's return address in the slot. Once a V8 embedder was patched (v8_arm), a patched
// entry whose return address lies in no module's code and no trampoline pool is left alone
// (v8_foreign_return): V8's generated code lives in memory of its own.
struct V8CodeRanges {
  static constexpr unsigned kMax = 512;
  struct Range {
    uintptr_t lo, hi;
  };
  Range ranges[kMax];
  unsigned count;  // published with release after the ranges
  bool armed;
};
extern V8CodeRanges g_v8_code;

// Adds every loaded module's executable segments (again after a dlopen) and arms the check.
// Under the patcher's lock.
void v8_arm();
// Adds [lo, hi) (a trampoline pool). Under the patcher's lock.
void v8_note_code(uintptr_t lo, uintptr_t hi);

// Whether `ret`, a patched function's return address, comes from code of V8's own. Hot
// (the patched entry's fast path): integer code, no call.
inline bool v8_foreign_return(uintptr_t ret) {
  if (!__atomic_load_n(&g_v8_code.armed, __ATOMIC_RELAXED)) [[likely]]
    return false;
  const unsigned n = __atomic_load_n(&g_v8_code.count, __ATOMIC_ACQUIRE);
  for (unsigned i = 0; i < n; ++i)
    if (ret - g_v8_code.ranges[i].lo < g_v8_code.ranges[i].hi - g_v8_code.ranges[i].lo) return false;
  return true;
}

}  // namespace callmon::rt
