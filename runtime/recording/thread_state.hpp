// Per-thread recording state: the shadow stack of open calls and the write cursor into the
// thread's memory-mapped event file. Set up lazily on a thread's first hook, finished at
// thread exit. Only its own thread touches it — but a signal handler running on that
// thread can interrupt any hook at any instruction, which is what the `guard` word and the
// reservation protocol in event_writer.hpp are about.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "callmon/format/records.hpp"

namespace callmon::rt {

// One open call. `sp` is the frame address of the hook that recorded it: the caller's
// stack pointer minus 16 (hooks and interposers keep frame pointers), so deeper calls have
// smaller values and a frame abandoned by longjmp or an exception can be recognised.
// In the -pg modes (hooks_pg.cpp) `sp` is the address of the call's return-address slot
// minus 16, which orders the same way against the interposers' frame addresses, and `ret`
// is the return address the entry trampoline replaced (0 in -finstrument-functions mode).
struct Frame {
  uintptr_t fn;
  uintptr_t sp;
  uintptr_t ret;
};

// Where a frame's ENTER went, kept per shadow-stack slot only while the record-time
// duration filter is on: a call that ends sooner than the threshold with its ENTER still
// the last record of the chunk is taken back (hooks.cpp, take_back_short).
struct FrameRecord {
  uint8_t* before;       // the first byte of the ENTER, or of the HIDDEN written with it
  uint8_t* after;        // the cursor after it; nullptr: not a candidate
  uint64_t chunk;        // chunk index it was written in
  uint64_t enter_ticks;
  uint64_t prev_ticks;   // encoding state before the ENTER
  uintptr_t prev_addr;
  uint64_t prev_next;    // the address-table slots the ENTER overwrote (records.hpp, v6):
  uint64_t prev_cached;  // next[addr_slot(prev_addr)] and cache[addr_slot(fn)]
  uint64_t hidden[3];    // the counts of the HIDDEN record written with the ENTER (hooks.cpp,
                         // put_enter_kept), pending again if it is taken back; 0: none
};

// Bits of ThreadState::guard. Any bit set sends a hook to its slow path.
inline constexpr uint32_t kGuardBusyMask = 0xffff;   // hooks active on this thread (nesting)
inline constexpr uint32_t kGuardUnwinding = 1u << 16; // a C++ exception is propagating
inline constexpr uint32_t kGuardOverflow = 1u << 17;  // shadow stack full: frames uncounted
inline constexpr uint32_t kGuardStopped = 1u << 18;   // recording stopped (disk full, ...)
inline constexpr uint32_t kGuardRescan = 1u << 19;    // modules changed (dlopen): rescan
inline constexpr uint32_t kGuardFilter = 1u << 20;    // a record-time filter is on: every
                                                      // hook takes its slow path
inline constexpr uint32_t kGuardMonitor = 1u << 21;   // monitor mode (monitor_dispatch.hpp):
                                                      // every hook takes its slow path
inline constexpr uint32_t kGuardRuntime = 1u << 22;   // the runtime's own work runs on this
                                                      // thread: hooks record nothing
                                                      // (runtime_scope.hpp)

// How many exceptions, each thrown from a destructor run by the unwinding of the one
// before, the runtime follows (ThreadState::outer_depth); deeper ones only lose the
// [exception] mark of exits of -finstrument-functions frames.
inline constexpr uint32_t kOuterExceptions = 4;

struct MonitorThread;  // monitor_dispatch.cpp

struct ThreadState {
  // --- hot: touched by every hook ---
  uint8_t* cur;          // next free byte of the mapped chunk; advanced with xadd
  uint8_t* limit;        // end of the usable part of the chunk for depth-0 hooks; nested
                         // hooks may go kNestedMargin further (the file has blocks there)
  uint64_t last_ticks;   // encoding state: time base of the chunk
  uintptr_t last_addr;   // encoding state: last entered address of the chunk
  Frame* top;            // one past the innermost open frame
  Frame* stack_limit;    // end of the shadow stack's reserved storage
  uint32_t guard;        // kGuard* bits; 0 on the fast path
  uint32_t overflow_depth;  // frames entered while the shadow stack was full
  uint32_t tick_shift;   // encoding state: ENTER and EXIT deltas are in 2^tick_shift ticks
  uint32_t tick_mask;    // 2^tick_shift - 1: a delta with these bits set is written in ticks

  // --- cold ---
  uint8_t* real_end;     // end of the chunk mapping
  uint32_t window;       // bytes the next extension of the usable part adds
  uint64_t pause_ticks;  // clock ticks the last chunk switch held the thread, not yet in a
                         // PAUSE record (event_writer.cpp writes it after the record that
                         // caused the switch); 0: none
  uint64_t pause_end;    // clock reading when that switch ended
  // Records a depth-0 hook owes while it writes them in a slow path (its chunk switch
  // blocks signals and gets them when it gives the mask back: a handler that then leaves
  // by longjmp abandons the hook; interpose_signal.cpp, close_abandoned). pending_enter:
  // the innermost frame is pushed and its ENTER not in the chunk yet (the jump must not
  // count it). pending_exits: frames popped whose EXITs (or UNWIND) are not in the chunk
  // yet (the jump closes them). Set and cleared by write_enter_slow, write_exit_slow,
  // put_enter, put_exit and the exits that pop several frames; 0 otherwise.
  uint32_t pending_enter;
  uint32_t pending_exits;
  // A depth-0 record of a slow path (put_depth0's callers) may be committed while the
  // encoding state (last_ticks, the address tables) is not yet updated after it: set once
  // the record is reserved (its bytes are PAD until the copy, nothing for the reader yet),
  // cleared after the update. The code marks of the fast paths
  // (in_commit_window) cannot cover these: the compiler lays their blocks out in any order.
  // A handler that leaves by longjmp while it is set makes the writer start a new chunk.
  uint32_t unsynced;
  // Bytes a writer of this thread is filling with PAD ahead of the cursor before it
  // reserves them (event_writer.cpp, pad_before_reserving); 0 when none is. A signal
  // handler's nested record written meanwhile at the cursor would be overwritten by the
  // rest of that fill once the handler returns: it leaves that many bytes to the fill (a
  // hole of PAD) before its own record, and pads as far past it.
  uint32_t padding;
  // Fenced clock (check_hook_burst): the ticks between the hooks' checked clock reads, by
  // stretch: the entry hook's before its record's time and after it, the exit hook's after
  // its record's; and the burst ticks the first stretch caught (each burst counted up to
  // kBurstRateCapTicks, event_writer.hpp).
  uint64_t covered_before;
  uint64_t covered_after;
  uint64_t covered_exit;
  uint64_t burst_before;
  uint64_t calib_last;   // clock reading at the thread's last calibration in the run (or set-up)
  uint64_t calib_inner;  // a calibration not yet in a CALIB record, ticks x kCalibScale; 0: none
  uint64_t calib_outer;
  uint8_t* clock_mark;   // the cursor after the last CLOCK record (interpose_clock.cpp)
  uint64_t nested_ticks; // time of the last nested record (a signal handler's hook that ran
                         // inside a hook); see write_hook_pause
  uint8_t* chunk_base;   // mapping of the current chunk
  uint64_t chunk_index;  // index of the current chunk in the file
  // Which mapping the current chunk is, unique in the process for its life (map_chunk): a
  // later chunk, or the next attach's file, may be mapped at the same address as an earlier
  // one, so chunk_base alone cannot tell a place in this chunk from one in a chunk gone.
  uint64_t chunk_serial;
  uint32_t chunk_size;
  format::ThreadFileHeader* header;  // the file's first page, mapped for the thread's life
  Frame* stack_base;
  uint64_t stack_bytes;
  uint64_t throw_depth;  // frames open when the propagating exception was thrown
  // Exceptions thrown from a destructor while another is unwound (hooks.cpp, note_throw):
  // the throw_depth of each outer one, outermost first, while `outer_count` are saved.
  uint64_t outer_depth[kOuterExceptions];
  uint32_t outer_count;
  uint64_t record_depth; // frames at this index of the shadow stack and above are kept but
                         // not recorded (record-time depth filter); 0: all recorded
  uint64_t min_ticks;    // record-time duration filter (0: off)
  FrameRecord* records;  // one per shadow-stack slot while min_ticks is set
  // What the recorder did since the thread's last depth-0 record that no record shows,
  // written as a HIDDEN record before the next one (hooks.cpp, put_hidden): calls whose
  // probes ran but recorded nothing (name, depth and overflow filters), calls the duration
  // filter took back, and ticks spent capturing argument and return values.
  uint64_t hidden_filtered;
  uint64_t hidden_taken;
  uint64_t hidden_capture;
  uint8_t* selected;     // record-time name filter (filter_select.hpp): per shadow-stack
                         // slot, whether the frame's function is recorded, decided once at
                         // its entry so its exit agrees even if the module table changed;
                         // nullptr: no name filter
  pid_t tid;
  ThreadState* retired_next;  // in the retired list once the thread has finished
  MonitorThread* monitor;     // monitor mode only: the monitor's view of the thread
  char path[4096];       // the thread's event file
  // Encoding state of the v6 ENTER records with last_addr (format/records.hpp): read by
  // every ENTER, cleared with last_addr at every chunk start (reset_encoding).
  format::AddrTables tables;
};

// Copies the fenced entry hooks' checked and burst ticks before their record's time to the
// file's header.
inline void publish_entry_checks(ThreadState* s) {
  s->header->entry_checked_ticks = s->covered_before;
  s->header->entry_burst_ticks = s->burst_before;
}

// Whether the frame `f` of `s` is recorded (the depth filter), and how many of the frames
// [lo, hi) are.
inline bool frame_recorded(const ThreadState* s, const Frame* f) {
  uint64_t i = static_cast<uint64_t>(f - s->stack_base);
  return (s->record_depth == 0 || i < s->record_depth) && (!s->selected || s->selected[i]);
}
inline uint64_t frames_recorded(const ThreadState* s, const Frame* lo, const Frame* hi) {
  if (hi <= lo) return 0;
  if (s->selected) {  // slow paths only (unwinding, fork): a loop is fine
    uint64_t n = 0;
    for (const Frame* f = lo; f < hi; ++f) n += frame_recorded(s, f);
    return n;
  }
  if (s->record_depth == 0) return static_cast<uint64_t>(hi - lo);
  const Frame* cut = s->stack_base + s->record_depth;
  if (lo >= cut) return 0;
  return static_cast<uint64_t>((hi < cut ? hi : cut) - lo);
}

// The calling thread's state, or nullptr before its first hook. initial-exec TLS: one
// %fs-relative load, no __tls_get_addr call (libcallmon.so is preloaded or linked in, so
// its TLS block is part of the static TLS area).
extern __thread ThreadState* t_state __attribute__((tls_model("initial-exec")));

// Sets up the calling thread's state (and the process's, on first use). Returns nullptr when
// recording is off or failed; the hook then does nothing. A thread whose set-up failed is
// not tried again (an `untraced` meta line and one diagnostic say so) until
// thread_setup_retry.
ThreadState* thread_setup();

// Lets every thread whose set-up failed try again at its next hook: in a fork child and at
// an attach, where what failed (a directory, memory) may be there now.
void thread_setup_retry();

// `record -p`'s detach (attach_inherit.cpp): opens a file for thread `tid` of this process,
// written by the calling thread into `s`, a zeroed state of the caller's with its shadow
// stack, not the caller's own. thread_finish(s, true) ends it (and names it after the
// caller: the caller puts the thread's name back). False: no file (nothing to undo).
bool thread_open_for(ThreadState* s, pid_t tid);

// Writes END and completes the file's header. The state stays in use: glibc still runs
// code after the key destructors (freeing the thread's memory with the program's free(),
// which may be instrumented), and those calls simply follow the END. At thread exit the
// state is *retired*: released (file trimmed to its data, mappings unmapped) by a later
// thread_setup once the thread is gone. At process exit nothing is released.
void thread_finish(ThreadState* s, bool process_exit = false);

// In a fork child: forgets the retired states (their threads belong to the parent; their
// files must not be touched), unmapping the child's copies of their mappings.
void retired_after_fork_child();

// Moves to a fresh chunk (or extends the usable part of this one) after a reservation at
// `p` of `n` bytes overflowed. Runs with signals blocked. Returns false if no new chunk could
// be had (recording stops for this thread, kGuardStopped is set). A new chunk resets the
// encoding state. The time it took is added to pause_ticks.
bool switch_chunk(ThreadState* s, uint8_t* p, unsigned n);

// Ends the chunk's data at the cursor and moves to the next chunk, which restarts the
// encoding state on both sides: after a hook was abandoned (its signal handler left by
// longjmp) between its record's commit and its update of the encoding state
// (interpose_signal.cpp). Not from inside a hook. False: no new chunk (recording stopped).
bool restart_chunk(ThreadState* s);

// Extends the calling thread's window to the end of its current chunk (recording_seal:
// what the thread records behind a seccomp filter, where no file can grow, goes there).
// Not from a hook.
void thread_fill_chunk(ThreadState* s);

// Re-creates the calling thread's file after fork, in the child, with its open frames as
// INHERIT records.
void thread_after_fork_child(ThreadState* s);

}  // namespace callmon::rt
