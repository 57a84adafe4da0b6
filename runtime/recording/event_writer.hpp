// The hot path's record writer.
//
// A depth-0 hook (one that did not interrupt another hook of its thread) encodes its record
// branch-free into one 64-bit word, stores all 8 bytes at the cursor, and only then
// reserves the record's real length with one non-locked `xadd`. The single instruction
// cannot be split by a signal, and:
//  - the zero bytes stored past the record are overwritten by whatever comes next (and
//    read as "end of data" if nothing does: a crash right there loses nothing);
//  - a signal handler's hooks that run inside a hook are *nested*: they reserve 8 bytes of
//    PAD in front of each record (write_special), so an interrupted speculative store can
//    only land on PAD. The interrupted hook sees `xadd` return another position than the
//    one it stored at, puts the PAD back and writes its record at the position it got.
// Nested records are self-contained (absolute time and address, docs/format.md); they
// never touch the encoding state nor switch chunks, and may use kNestedMargin bytes past
// the usable part of the chunk.
//
// The hot path's calls out of line (a full chunk, a long record, a signal's interference,
// a burst) go through slow_call (core/slow_call.hpp): they may reach libc, and the -pg,
// --patch and library-call trampolines keep the vector registers only around those. The
// -finstrument-functions hooks call them directly (Via below).
//
// Why the word: the LEB128 length of a time delta or address delta varies from call to
// call, and a byte loop or a switch on it mispredicts often enough to cost ~10 ns per call.
#pragma once

#include <cstdint>
#include <cstring>

#include "callmon/format/records.hpp"
#include "runtime/core/clock.hpp"
#include "runtime/core/slow_call.hpp"
#include "runtime/hooks/hook_burst.h"
#include "runtime/recording/thread_state.hpp"

namespace callmon::rt {

inline constexpr unsigned kNestedMargin = 4096;
inline constexpr unsigned kNestedPad = 8;  // PAD bytes in front of every nested record
inline constexpr unsigned kInheritBatch = 64;  // addresses per INHERIT record

// Orders the compiler's view of memory against a signal handler on the same thread.
inline void signal_fence() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

// The fast path's busy mark on ThreadState::guard. Single read-modify-write instructions,
// not `guard = 1` / `guard = 0`: a signal handler (or a failing chunk switch inside this
// hook) may set a lasting bit such as kGuardStopped meanwhile, and a plain store would wipe
// it (a full disk then retried the file at every later hook).
inline void guard_acquire(ThreadState* s) {
  asm volatile("addl $1, %0" : "+m"(s->guard) : : "memory");
}
inline void guard_release(ThreadState* s) {
  asm volatile("subl $1, %0" : "+m"(s->guard) : : "memory");
}

// Pushes a shadow-stack frame and returns it. The slot is published (top raised) before it
// is filled, so that a signal's hooks push above it, not over it; until the fill its `sp`
// is 0, as pop_frames leaves every slot above the top. `sp` is written last: a frame whose
// `sp` is 0 is half-pushed (its `ret` may still be an earlier frame's), and whoever walks
// the frames from a signal's context skips it — an asynchronous cancellation's forced
// unwind runs pg_restore_returns inside the interrupted hook. (Monitored threads pop their
// own way: their signal handlers' hooks push no frames.)
inline Frame* push_frame(ThreadState* s, uintptr_t fn, uintptr_t sp, uintptr_t ret) {
  Frame* f = s->top;
  s->top = f + 1;
  signal_fence();
  f->fn = fn;
  f->ret = ret;
  signal_fence();
  f->sp = sp;
  return f;
}

// Pops the frames from `f` up. Their `sp` is cleared first, while they are still below the
// top: a slot keeps what its last frame left, and a push publishes the slot before filling
// it. A signal's exit hook that looked below its own frame (pg_exit_slow: frames sharing its
// slot after a tail call) found there the `sp` of an earlier handler's frame at the same
// stack depth, took the half-pushed frame for one and popped it with its own; the
// trampoline then found no frame for a live call ("a hijacked return address is missing").
inline void pop_frames(ThreadState* s, Frame* f) {
  for (Frame* p = s->top; p-- > f;) p->sp = 0;
  signal_fence();
  s->top = f;
}

// The same for the innermost frame `f` alone (the fast paths).
inline void pop_frame(ThreadState* s, Frame* f) {
  f->sp = 0;
  signal_fence();
  s->top = f;
}

// Code marks for the signal wrapper (interpose_signal.cpp, signal_contexts.hpp): a handler
// that leaves by longjmp abandons the hook it interrupted, and if that hook had committed its
// record (the `xadd` below) but not yet updated the encoding state after it, the writer's
// state is behind the reader's. The address after every commit goes to the table
// `callmon_commits`, the place where the state is up to date again (CALLMON_SYNCED) to
// `callmon_synced`; no instruction is added. The `memory` clobber keeps the state's stores
// before the mark.
#define CALLMON_CODE_MARK(table)                                                    \
  "891:\n\t.pushsection " table ",\"aw?\"\n\t.balign 8\n\t.quad 891b\n\t.popsection"
#define CALLMON_SYNCED() asm volatile(CALLMON_CODE_MARK("callmon_synced") : : : "memory")

// Reserves n bytes at *cur and returns where they start. Not `lock`-prefixed: atomic with
// respect to this thread's signal handlers, which is all that may touch this cursor.
inline uint8_t* bump(uint8_t** cur, uintptr_t n) {
  asm volatile("xaddq %0, %1\n" CALLMON_CODE_MARK("callmon_commits")
               : "+r"(n), "+m"(*cur)
               :
               : "memory");
  return reinterpret_cast<uint8_t*>(n);
}

// bump without the commit mark: for a record after which the encoding state does not
// change (a nested record: absolute time, no table entry) or whose window
// ThreadState::unsynced covers (the slow paths' depth-0 records, put_depth0). Every marked
// commit has its synced mark in the same function shortly after it
// (tests/audit/commit_window_audit.py).
inline uint8_t* bump_unmarked(uint8_t** cur, uintptr_t n) {
  asm volatile("xaddq %0, %1\n" : "+r"(n), "+m"(*cur) : : "memory");
  return reinterpret_cast<uint8_t*>(n);
}

// Unsigned LEB128 of v as little-endian bytes of a word, given its length n (1..8, so
// v < 2^56): the 7-bit groups spread one per byte, continuation bits on all but the last.
inline uint64_t leb128_word(uint64_t v, unsigned n) {
  uint64_t w = (v & 0x7f) | ((v << 1) & 0x7f00) | ((v << 2) & 0x7f0000) |
               ((v << 3) & 0x7f000000) | ((v << 4) & 0x7f00000000) |
               ((v << 5) & 0x7f0000000000) | ((v << 6) & 0x7f000000000000) |
               ((v << 7) & 0x7f00000000000000);
  return w | (0x8080808080808080ull & ((uint64_t{1} << (8 * (n - 1))) - 1));
}

// How a fast path reaches the writer's out-of-line records (write_enter_slow,
// write_exit_slow: a full window, a long record, a delta that is no multiple of the clock's
// step).
//  - kHot: through slow_call_hot, for the probes behind trampolines that keep no vector
//    state (-pg, --patch, library calls, XRay). The two functions are the library's own
//    integer code; what in them may reach libc (the chunk switch) goes through slow_call
//    itself (tests/audit/fast_path_audit.py checks both). slow_call saved the whole
//    AVX-512 state there (~130 ns; glibc's EVEX functions leave it "in use" for good), and
//    on a VM whose TSC now and then reads one tick off its step ~1% of the records of fib
//    went that way: ~3 ns per call in all.
//  - kDirect: a plain call, for the -finstrument-functions hooks: the compiler's call to
//    them already treats every vector register as clobbered, as any call does (their
//    enter_slow and exit_slow are called the same way, hooks_cyg.cpp).
enum class Via { kHot, kDirect };

template <Via kVia, class... P, class... A>
inline void call_out_of_line(void (*f)(P...), A... args) {
  if constexpr (kVia == Via::kDirect) f(static_cast<P>(args)...);
  else slow_call_hot(f, args...);
}

// Out of line: a nested hook interfered with a speculative store, or the chunk is full.
void write_word_interrupted(ThreadState* s, uint8_t* stored_at, uint8_t* got, uint64_t word,
                            unsigned n);

// The two halves of write_word, apart so a test can run a nested hook between them.
// speculative_store returns where it stored, or nullptr when the usable part of the chunk
// is full.
inline uint8_t* speculative_store(ThreadState* s, uint64_t word, unsigned n) {
  uint8_t* c = s->cur;
  if (__builtin_expect(c + n > s->limit, 0)) return nullptr;
  std::memcpy(c, &word, 8);  // c + 8 <= limit + kNestedMargin: the file has blocks there
  return c;
}

inline void commit_store(ThreadState* s, uint8_t* stored_at, uint64_t word, unsigned n) {
  uint8_t* p = bump(&s->cur, n);
  if (__builtin_expect(p != stored_at, 0))
    slow_call(&write_word_interrupted, s, stored_at, p, word, n);
}

// Stores `word` (n <= 8 bytes of record) at the cursor. Returns false when the usable part
// of the chunk is full: the caller then takes the slow path.
inline bool write_word(ThreadState* s, uint64_t word, unsigned n) {
  uint8_t* c = speculative_store(s, word, n);
  if (__builtin_expect(c == nullptr, 0)) return false;
  commit_store(s, c, word, n);
  return true;
}

// Slow path of write_enter/write_exit: full chunk, or a record longer than 8 bytes.
void write_enter_slow(ThreadState* s, uint64_t t, uintptr_t fn);
void write_exit_slow(ThreadState* s, uint64_t t);

// Depth-0 ENTER. The hot path of every call. The v6 form (format/records.hpp) is chosen
// without branches: the guessed next callee, else the cached address, else a new one with
// its delta; the tables are updated unconditionally after the store. Version 7: the delta
// is in units of the clock's step (s->tick_shift); one that is no multiple of it (the clock
// stepped back and was clamped, or a guess of the step that was wrong) takes the slow
// path, which writes it in ticks as a SPECIAL ENTER.
template <Via kVia = Via::kHot>
inline void write_enter(ThreadState* s, uint64_t t, uintptr_t fn) {
  using namespace format;
  if (t < s->last_ticks) t = s->last_ticks;  // never encode time stepping back
  const uint64_t ticks = t - s->last_ticks;
  const uint64_t dt = ticks >> s->tick_shift;
  const uintptr_t last = s->last_addr;
  uint64_t* next = &s->tables.next[addr_slot(last)];
  const unsigned slot = addr_slot(fn);
  const bool guessed = *next == fn;
  const bool cached = s->tables.cache[slot] == fn;
  uint64_t v = (dt << kV6NewShift) | kV6NewTag;
  v = cached ? (dt << kV6CachedShift) | (uint64_t{slot} << 4) | kV6CachedTag : v;
  v = guessed ? (dt << kV6GuessedShift) | kV6GuessedTag : v;
  const bool known = guessed | cached;
  const uint64_t z = zigzag(static_cast<int64_t>(fn - last));
  const unsigned nzz = leb128_size(z);
  const unsigned nv = leb128_size(v), nz = known ? 0 : nzz;
  // dt < 2^42: no form's shift lost bits (a chunk's first record, with the absolute time,
  // takes the slow path).
  if (__builtin_expect(((dt >> 42) | (ticks & s->tick_mask)) == 0 && nv + nz <= 8, 1)) {
    const uint64_t zw = known ? 0 : leb128_word(z, nzz);
    if (__builtin_expect(write_word(s, leb128_word(v, nv) | (zw << ((8 * nv) & 63)), nv + nz),
                         1)) {
      s->last_ticks = t;
      *next = fn;
      s->tables.cache[slot] = fn;
      s->last_addr = fn;
      CALLMON_SYNCED();
      return;
    }
  }
  call_out_of_line<kVia>(&write_enter_slow, s, t, fn);
}

// Depth-0 EXIT: V = dt << 1, and dt = 0 in two bytes (0x80 0x00), never a byte 0. dt is in
// units of the clock's step, as for write_enter; a delta that is no multiple of it takes
// the slow path (a SPECIAL EXIT in ticks).
template <Via kVia = Via::kHot>
inline void write_exit(ThreadState* s, uint64_t t) {
  using namespace format;
  if (t < s->last_ticks) t = s->last_ticks;
  const uint64_t ticks = t - s->last_ticks;
  uint64_t v = (ticks >> s->tick_shift) << 1;
  unsigned nv = leb128_size(v) + (v == 0);
  if (__builtin_expect(nv <= 8 && (ticks & s->tick_mask) == 0, 1) &&
      __builtin_expect(write_word(s, leb128_word(v, nv), nv), 1)) {
    s->last_ticks = t;
    CALLMON_SYNCED();
    return;
  }
  call_out_of_line<kVia>(&write_exit_slow, s, t);
}

// Bytes of the depth-0 ENTER of `fn` after `ticks` that write_enter would write now
// (hooks.cpp takes an ENTER back only when it finds it whole where it wrote it).
inline unsigned enter_record_size(const ThreadState* s, uintptr_t fn, uint64_t ticks) {
  using namespace format;
  if (ticks & s->tick_mask)
    return leb128_size(special_head(kCodeEnter, false)) + leb128_size(ticks) + leb128_size(fn);
  return enter_v6_size(choose_enter_v6(s->tables, s->last_addr, fn, ticks >> s->tick_shift));
}

// A gap this long between two clock reads of one hook is not the hook's work (hook_burst.h).
inline constexpr uint64_t kHookBurstTicks = CALLMON_HOOK_BURST_TICKS;

// Out of line: writes the PAUSE of a burst check_hook_burst found; returns its ticks (0 when
// it was none after all, or in the calibration's state).
uint64_t write_hook_pause(ThreadState* s, uint64_t from, uint64_t to);

// Depth-0 hooks under --clock=tsc-fenced, which read the clock at both ends of their work:
// a burst between the reads `from` and `to` is time the program would not have lost
// without the probes (they are most of a parent's measured time), so it is recorded as a
// PAUSE ending at `to` that compensation takes out; returns its ticks. A shorter gap is the
// hook's own work and adds to `covered` (a ThreadState::covered_* counter): the ticks in
// which a burst would have been caught. The calibration measures from them what no check
// covers, and the analysis applies the rate of bursts per checked tick there
// (docs/runtime.md, "Bursts between the checks"). A `to` before `from` (a thread moved to a
// CPU whose TSC lags) is neither.
inline uint64_t check_hook_burst(ThreadState* s, uint64_t from, uint64_t to, uint64_t& covered) {
  uint64_t d = to - from;
  if (__builtin_expect(d > kHookBurstTicks, 0))
    return to > from ? slow_call(&write_hook_pause, s, from, to) : 0;
  covered += d;
  return 0;
}

// A burst counts at most this many ticks towards the burst rate of the entry's first stretch
// (ThreadState::burst_before; about 125 us at 2.1 GHz). The host's usual bursts are 30-60 us;
// a rare one of milliseconds (35 ms seen once in ten recordings on this project's VM) is
// still a PAUSE of its full length, but as a sample of the rate it would outweigh all the
// others: the analysis applied a rate of 0.97 to every call, and every compensated time
// came out 0.
inline constexpr uint64_t kBurstRateCapTicks = 1u << 18;

// The fenced clock's ENTER from its reads: `early` (the hook's first), `t` (the ordered one
// the record carries) and `late()` after the write. A burst before `t` is the caller's time:
// its PAUSE comes before the ENTER. One during the write is the new call's: after it.
// The bursts of the first stretch are counted apart: it stores nothing to the trace, like
// the stretches no check covers, and on this project's VM the host took the CPU there at a
// third of the rate it did in the stretches that store the records (docs/runtime.md).
template <Via kVia = Via::kHot, class Clock>
inline void write_fenced_enter(ThreadState* s, uint64_t early, uint64_t t, uintptr_t fn,
                               Clock late) {
  if (uint64_t burst = check_hook_burst(s, early, t, s->covered_before); burst != 0)
    s->burst_before += burst < kBurstRateCapTicks ? burst : kBurstRateCapTicks;
  write_enter<kVia>(s, t, fn);
  check_hook_burst(s, t, late(), s->covered_after);
}

// The fenced clock's EXIT at `t`: a burst between `t` and `late()` after the write is a
// PAUSE after the EXIT (the caller's time).
template <Via kVia = Via::kHot, class Clock>
inline void write_fenced_exit(ThreadState* s, uint64_t t, Clock late) {
  write_exit<kVia>(s, t);
  check_hook_burst(s, t, late(), s->covered_exit);
}

// The fast paths' ENTER; `early` is the hook's first clock read. Fenced: stamped with an
// ordered read taken now (clock.hpp), bursts checked around it. The default clock costs one
// branch here. The late reads need no lfence: an interruption stops the hook at an
// instruction before them in program order, and a read executed early is squashed and taken
// again after it.
template <Via kVia = Via::kHot>
inline void write_hook_enter(ThreadState* s, uint64_t early, uintptr_t fn) {
  if (__builtin_expect(g_clock_fenced, 0)) {
    write_fenced_enter<kVia>(s, early, fenced_ticks(), fn, [] { return __rdtsc(); });
    return;
  }
  write_enter<kVia>(s, early, fn);
}

// The -pg fast path's EXIT at `t` (the -finstrument-functions exit reads the clock after
// its body returns instead: arch/x86_64/cyg_hooks.S and write_exit_burst_pause).
inline void write_hook_exit(ThreadState* s, uint64_t t) {
  if (__builtin_expect(g_clock_fenced, 0)) {
    write_fenced_exit(s, t, [] { return __rdtsc(); });
    return;
  }
  write_exit(s, t);
}

// A burst from an EXIT at `from` to a clock read `to` taken after the hook released its
// guard: a PAUSE unless something was written since (a signal handler's calls: the gap was
// then, at least partly, the program's time). The caller holds the guard again.
void write_exit_burst_pause(ThreadState* s, uint64_t from, uint64_t to);

// Tests only (tests/unit/runtime_writer_test.cpp): the slow paths' steps where a signal
// handler's nested records may come in, in order. Built with CALLMON_WRITER_TEST_STEPS (the
// unit test's copy of event_writer.cpp, never the runtime library: its hot slow paths make
// no indirect call, tests/audit/fast_path_audit.py), g_writer_test_step is called at each.
enum class WriterStep {
  kPadding,   // the fill of PAD ahead of the cursor has read the cursor, not filled yet
  kPadded,    // filled, not reserved
  kReserved,  // reserved, the record not copied yet
};
extern void (*g_writer_test_step)(ThreadState*, WriterStep);

// Bytes a SPECIAL record may carry after its LEB128 fields (the payload of ARGS/RETVAL).
inline constexpr unsigned kMaxPayloadBytes = 1024;

// Any SPECIAL record (and nested ENTER/EXIT), depth 0 or nested: its LEB128 fields, then
// `nbytes` raw bytes (at most kMaxPayloadBytes). Not on the fast path.
void write_special(ThreadState* s, bool nested, format::SpecialCode code, uint64_t t,
                   const uint64_t* fields, unsigned nfields, const uint8_t* bytes = nullptr,
                   unsigned nbytes = 0);

}  // namespace callmon::rt
