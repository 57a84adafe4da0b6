// The hot path's record writer. A record is encoded straight into the mapped chunk after a
// reservation made with one non-locked `xadd`: that instruction cannot be split by a signal,
// so a signal handler whose hooks write records while this thread is inside a hook always
// gets bytes after ours, never the same ones. Such nested hooks write self-contained
// records (absolute time and address, see docs/format.md) and never touch the encoding
// state or switch chunks; they may write up to kNestedMargin bytes past the usable part.
#pragma once

#include <cstdint>

#include "callmon/format/records.hpp"
#include "runtime/thread_state.hpp"

namespace callmon::rt {

inline constexpr unsigned kNestedMargin = 4096;

// Orders the compiler's view of memory against a signal handler on the same thread.
inline void signal_fence() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

// Reserves n bytes at *cur and returns where they start. Not `lock`-prefixed: atomic with
// respect to this thread's signal handlers, which is all that may touch this cursor.
inline uint8_t* bump(uint8_t** cur, uintptr_t n) {
  asm volatile("xaddq %0, %1" : "+r"(n), "+m"(*cur) : : "memory");
  return reinterpret_cast<uint8_t*>(n);
}

// Depth-0 ENTER. The hot path of every call.
inline void write_enter(ThreadState* s, uint64_t t, uintptr_t fn) {
  using namespace format;
  for (;;) {
    if (t < s->last_ticks) t = s->last_ticks;  // never encode time stepping back
    uint64_t v = ((t - s->last_ticks) << 2) | kKindEnter;
    uint64_t z = zigzag(static_cast<int64_t>(fn - s->last_addr));
    unsigned n = leb128_size(v) + leb128_size(z);
    uint8_t* p = bump(&s->cur, n);
    if (__builtin_expect(p + n <= s->limit, 1)) {
      leb128_put(leb128_put(p, v), z);
      break;
    }
    if (!switch_chunk(s, p, n)) return;
  }
  s->last_ticks = t;
  s->last_addr = fn;
}

// Depth-0 EXIT.
inline void write_exit(ThreadState* s, uint64_t t) {
  using namespace format;
  for (;;) {
    if (t < s->last_ticks) t = s->last_ticks;
    uint64_t v = ((t - s->last_ticks) << 2) | kKindExit;
    unsigned n = leb128_size(v);
    uint8_t* p = bump(&s->cur, n);
    if (__builtin_expect(p + n <= s->limit, 1)) {
      leb128_put(p, v);
      break;
    }
    if (!switch_chunk(s, p, n)) return;
  }
  s->last_ticks = t;
}

// Any SPECIAL record (and nested ENTER/EXIT), depth 0 or nested. Not on the fast path.
void write_special(ThreadState* s, bool nested, format::SpecialCode code, uint64_t t,
                   const uint64_t* fields, unsigned nfields);

}  // namespace callmon::rt
