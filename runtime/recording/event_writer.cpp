// The writer's slow paths: records that do not fit the 8-byte word or the chunk, SPECIAL
// records, nested records, and the repair after a signal interrupted a speculative store.
#include "runtime/recording/event_writer.hpp"

#include <string.h>

#include <algorithm>

#include "runtime/core/test_signal.hpp"

namespace callmon::rt {

using namespace format;

#ifdef CALLMON_WRITER_TEST_STEPS
void (*g_writer_test_step)(ThreadState*, WriterStep) = nullptr;
#endif

namespace {

// Reserves n bytes for a depth-0 record of any length, switching chunks as needed.
// Returns false when recording stopped. `encode` is called again after a chunk switch,
// because the encoding state (time base, last address) restarts there.
// Longest record the runtime writes: INHERIT with kInheritBatch addresses, or ARGS with its
// payload.
constexpr unsigned kMaxSpecialBytes = std::max(10 * (3 + kInheritBatch), 32 + kMaxPayloadBytes);

// Fills [at, at + n) with PAD as far as the file has blocks (the usable part of the chunk
// and the nested margin past it). Only ever ahead of the cursor: bytes nothing has reserved.
void pad_ahead(ThreadState* s, uint8_t* at, unsigned n) {
  uint8_t* usable = s->limit + kNestedMargin;
  if (at < usable) memset(at, kPadByte, std::min<size_t>(n, static_cast<size_t>(usable - at)));
}

#ifdef CALLMON_WRITER_TEST_STEPS
void test_step(ThreadState* s, WriterStep step) {
  if (g_writer_test_step) g_writer_test_step(s, step);
}
#else
inline void test_step(ThreadState*, WriterStep) {}  // the library: no test code at all
#endif

// PAD over the `n` bytes ahead of the cursor, before the caller reserves its record there:
// a hook abandoned between the reservation and the copy (a signal handler that interrupted
// it left by longjmp) leaves filler, not zero bytes, which would end the chunk's data.
// ThreadState::padding says so for the whole fill and until the caller's reservation
// (done_reserving): a handler's nested record that comes meanwhile goes past the bytes
// this fill may still write. Without it, a handler arriving between the load of the cursor
// and the end of the memset had its first record overwritten by the rest of the fill once
// it returned (its head byte became PAD: "a special record of unknown code", or worse,
// records that decode as others; stress.signals under load, ~1 run in 7).
void pad_before_reserving(ThreadState* s, unsigned n) {
  s->padding = n;
  signal_fence();  // announced before the cursor is read
  uint8_t* at = s->cur;
  test_step(s, WriterStep::kPadding);
  pad_ahead(s, at, n);
  signal_fence();
  test_step(s, WriterStep::kPadded);
}

// After the reservation: the fill is over (a handler since has left the hole for nothing).
void done_reserving(ThreadState* s, uint32_t outer) {
  signal_fence();
  s->padding = outer;
}

// `owed`: a pending count (ThreadState::pending_enter/pending_exits) the record settles,
// lowered once its bytes are in the chunk. Sets ThreadState::unsynced before the commit;
// the caller clears it (synced()) once the encoding state is updated after the record.
// `kMax`: the most bytes `encode` writes, its buffer on the stack. The slow ENTER and EXIT
// take kMaxRecordBytes: they run in signal handlers too, on alternate stacks sized from
// MINSIGSTKSZ, where the 1 KiB a SPECIAL needs overflowed a 4 KiB stack (a program that
// lived without callmon died of SIGSEGV).
template <unsigned kMax, class Encode>
bool put_depth0(ThreadState* s, Encode&& encode, uint32_t* owed = nullptr) {
  for (;;) {
    uint8_t buf[kMax];
    unsigned n = encode(buf);
    pad_before_reserving(s, n);
    uint8_t* p = bump_unmarked(&s->cur, n);
    done_reserving(s, 0);  // no writer of this thread is below a depth-0 one
    test_step(s, WriterStep::kReserved);
    if (p + n <= s->limit) {
      // Reserved over PAD, the record is not the reader's until its bytes are there: from
      // here until the caller's state update, a jump from a handler must restart the chunk.
      s->unsynced = 1;
      signal_fence();
      memcpy(p, buf, n);
      signal_fence();
      if (owed && *owed) --*owed;  // written: a jump from a handler abandons nothing of it
#ifndef CALLMON_WRITER_TEST_STEPS
      if (__builtin_expect(g_test_record_signal != 0, 0)) test_record_signal_send();
#endif
      return true;
    }
    // Through slow_call: the hooks' per-call slow paths write these records behind
    // slow_call_hot, and a chunk switch calls libc (core/slow_call.hpp).
    if (!slow_call(&switch_chunk, s, p, n)) return false;
  }
}

// The encoding state is up to date after a put_depth0 record (or none was written).
inline void synced(ThreadState* s) {
  signal_fence();
  s->unsynced = 0;
}

}  // namespace

void write_word_interrupted(ThreadState* s, uint8_t* stored_at, uint8_t* got, uint64_t word,
                            unsigned n) {
  (void)s;
  // A nested hook reserved space at `stored_at` between our load of the cursor and our
  // xadd; it begins with kNestedPad PAD bytes, which is all our 8-byte store can have hit.
  memset(stored_at, kPadByte, kNestedPad);
  // Our record goes where the xadd put it, byte-exact (a later nested record may follow).
  memcpy(got, &word, n);
}

// After a depth-0 record whose write switched chunks: the PAUSE record for the time the
// switch took. After the record, not before: its time was read before the switch, so the
// pause belongs to the calls open after it (an ENTER's call too). If writing the PAUSE
// switches again (a full chunk), write_special writes that one's PAUSE after it in turn.
// A calibration made in the switch (thread_state.cpp, calibrate_if_due) goes first, in a
// CALIB record at the same time.
static void write_pending_pause(ThreadState* s) {
  uint64_t ticks = s->pause_ticks;
  s->pause_ticks = 0;
  if (s->calib_outer) {
    uint64_t costs[2] = {s->calib_inner, s->calib_outer};
    s->calib_inner = s->calib_outer = 0;
    write_special(s, false, kCodeCalib, s->pause_end, costs, 2);
  }
  write_special(s, false, kCodePause, s->pause_end, &ticks, 1);
}

uint64_t write_hook_pause(ThreadState* s, uint64_t from, uint64_t to) {
  // The calibration's scratch state has no file: its decoder expects ENTER and EXIT only,
  // and its robust mean leaves a disturbed sample out anyway.
  if (!s->header) return 0;
  // A chunk switch inside the hook's record write has its own PAUSE: count only what came
  // after it, or the switch would be taken out twice.
  if (s->pause_end > from) from = s->pause_end;
  if (to <= from + kHookBurstTicks) return 0;
  // A signal handler whose instrumented calls ran inside the hook (nested records): that
  // time is the program's. (A handler without instrumented calls leaves no such trace; its
  // time inside a hook is taken as a pause.)
  if (s->nested_ticks >= from) return 0;
  uint64_t ticks = to - from;
  write_special(s, false, kCodePause, to, &ticks, 1);
  // Counted apart from the recorder's own pauses: what the host took shows in `callmon info`.
  s->header->burst_ticks += ticks;
  s->header->burst_count++;
  return ticks;
}

void write_exit_burst_pause(ThreadState* s, uint64_t from, uint64_t to) {
  if (s->last_ticks == from) check_hook_burst(s, from, to, s->covered_exit);
}

// A delta that is no multiple of the clock's step (tick_shift) goes in ticks, in a depth-0
// SPECIAL ENTER or EXIT: the reader moves the time base and the address tables the same way.
void write_enter_slow(ThreadState* s, uint64_t t, uintptr_t fn) {
  s->pending_enter = 1;  // until put_depth0 has the bytes in the chunk
  signal_fence();
  if (put_depth0<kMaxRecordBytes>(s, [&](uint8_t* buf) {
        if (t < s->last_ticks) t = s->last_ticks;
        const uint64_t ticks = t - s->last_ticks;
        if (ticks & s->tick_mask) {
          uint8_t* p = leb128_put(buf, special_head(kCodeEnter, false));
          p = leb128_put(p, ticks);
          return static_cast<unsigned>(leb128_put(p, fn) - buf);
        }
        EnterV6 e = choose_enter_v6(s->tables, s->last_addr, fn, ticks >> s->tick_shift);
        return static_cast<unsigned>(put_enter_v6(buf, e) - buf);
      }, &s->pending_enter)) {
    s->last_ticks = t;
    uint64_t last = s->last_addr;
    note_enter_v6(s->tables, last, fn);
    s->last_addr = last;
    CALLMON_SYNCED();
    synced(s);
    if (s->pause_ticks) write_pending_pause(s);
  }
  synced(s);
  s->pending_enter = 0;  // also when the recording stopped and the record was not written
}

void write_exit_slow(ThreadState* s, uint64_t t) {
  if (!s->pending_exits) s->pending_exits = 1;  // a caller popping several set its count
  signal_fence();
  if (put_depth0<kMaxRecordBytes>(s, [&](uint8_t* buf) {
        if (t < s->last_ticks) t = s->last_ticks;
        const uint64_t ticks = t - s->last_ticks;
        if (ticks & s->tick_mask) {
          uint8_t* p = leb128_put(buf, special_head(kCodeExit, false));
          return static_cast<unsigned>(leb128_put(p, ticks) - buf);
        }
        return static_cast<unsigned>(put_exit_v6(buf, ticks >> s->tick_shift) - buf);
      }, &s->pending_exits)) {
    s->last_ticks = t;
    CALLMON_SYNCED();
    synced(s);
    if (s->pause_ticks) write_pending_pause(s);
  } else {
    synced(s);
    s->pending_exits = 0;  // the recording stopped: nothing more is written
  }
}

void write_special(ThreadState* s, bool nested, SpecialCode code, uint64_t t,
                   const uint64_t* fields, unsigned nfields, const uint8_t* bytes,
                   unsigned nbytes) {
  if (nbytes > kMaxPayloadBytes) nbytes = kMaxPayloadBytes;  // callers stay below it
  auto encode = [&](uint8_t* buf) {
    if (!nested && t < s->last_ticks) t = s->last_ticks;
    uint8_t* p = leb128_put(buf, special_head(code, nested));
    p = leb128_put(p, nested ? t : t - s->last_ticks);
    for (unsigned i = 0; i < nfields; ++i) p = leb128_put(p, fields[i]);
    if (nbytes) memcpy(p, bytes, nbytes);
    return static_cast<unsigned>(p + nbytes - buf);
  };
  if (!nested) {
    bool written = put_depth0<kMaxSpecialBytes>(s, encode);
    if (written) s->last_ticks = t;
    CALLMON_SYNCED();
    synced(s);
    if (written) {
      // END and EXEC close the open calls only as the last record (docs/format.md): no
      // PAUSE after them; the calls closed at their time, before the pause.
      if (code == kCodeEnd || code == kCodeExec) s->pause_ticks = 0;
      if (s->pause_ticks) write_pending_pause(s);
    }
    return;
  }
  // Nested: PAD first (see event_writer.hpp), never a chunk switch under the interrupted
  // hook; past the margin the event is counted as lost.
  s->nested_ticks = t;
  uint8_t buf[kMaxSpecialBytes];
  unsigned n = encode(buf);
  // The interrupted writer's fill, if one was under way (ThreadState::padding), may still
  // write `hole` bytes at the cursor: the record goes past them, behind its own PAD.
  const uint32_t hole = s->padding;
  const unsigned len = hole + kNestedPad + n;
  // PAD over the reservation and as far past it as a writer below may reserve next, before
  // reserving (after, a signal's records could already be there): the interrupted hook's
  // record goes past it (write_word_interrupted), and if it never comes (the handler left
  // by longjmp), or this hook is abandoned before its copy, filler is read there, not zero
  // bytes that end the chunk's data.
  pad_before_reserving(s, len + std::max<unsigned>(hole, kNestedPad));
  uint8_t* p = bump_unmarked(&s->cur, len);
  done_reserving(s, hole);
  test_step(s, WriterStep::kReserved);
  uint8_t* limit = s->limit + kNestedMargin;
  if (p + len <= limit) {
    memset(p, kPadByte, hole + kNestedPad);
    memcpy(p + hole + kNestedPad, buf, n);
    return;
  }
  // What it reserved inside the allocated part is padded so the records after it stay
  // readable.
  if (p < limit) memset(p, kPadByte, static_cast<size_t>(limit - p));
  if (s->header) __atomic_fetch_add(&s->header->lost_events, 1, __ATOMIC_RELAXED);
}

}  // namespace callmon::rt
