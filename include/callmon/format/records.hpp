// On-disk records of a callmon recording: the per-thread event file header and the
// event encoding. STABLE FORMAT: this header is shared by the runtime (writer) and the
// format library (reader). Any change to an encoding bumps kTraceVersion and is described
// in docs/format.md.
#pragma once

#include <cstddef>
#include <cstdint>

namespace callmon::format {

// "CMTHREAD" read as bytes at the start of every thread event file.
inline constexpr char kThreadMagic[8] = {'C', 'M', 'T', 'H', 'R', 'E', 'A', 'D'};
// Version 2 added the ARGS and RETVAL records (kCodeArgs, kCodeRetval), version 3 the PAUSE
// record (kCodePause), version 4 the CALIB and CLOCK records (kCodeCalib, kCodeClock),
// version 5 the HIDDEN record (kCodeHidden), version 6 the compact ENTER and EXIT records
// (kV6*: an address cache and a next-callee guess), version 7 their time deltas in units of
// the clock's step (ThreadFileHeader::tick_shift), version 8 the UNWIND reason 4
// (UnwindReason::kSuspended) and INHERIT records later in a stream (ucontext switches):
// a reader of version 7 dropped a chunk that held one, so it must refuse the file
// instead. Readers accept every version from kMinTraceVersion on.
inline constexpr uint16_t kTraceVersion = 8;
// First version with the compact ENTER and EXIT records (docs/format.md, "Version 6").
inline constexpr uint16_t kCompactVersion = 6;
// First version whose header has tick_shift (docs/format.md, "Version 7").
inline constexpr uint16_t kTickShiftVersion = 7;
// First version that may hold UNWIND reason 4 and mid-stream INHERIT (docs/format.md,
// "Version 8"). Readers accept them in version 7 files too: the runtime of the stop that
// added them wrote them before the version was bumped.
inline constexpr uint16_t kSuspendVersion = 8;
// Largest tick_shift a reader accepts (a clock that steps by 256 ticks is no clock).
inline constexpr uint32_t kMaxTickShift = 8;
inline constexpr uint16_t kMinTraceVersion = 1;
// The header occupies the first page; chunks of events follow it.
inline constexpr uint32_t kHeaderSize = 4096;
inline constexpr uint32_t kDefaultChunkSize = 4u << 20;
inline constexpr uint32_t kMinChunkSize = 64u << 10;
inline constexpr uint32_t kMaxChunkSize = 256u << 20;

enum class ClockKind : uint32_t { kTsc = 0, kMonotonic = 1 };

// Header of a thread event file. The runtime keeps it mapped while the thread runs and
// updates the counters at chunk switches and at the end, so a reader learns how much a
// truncated file lost.
struct ThreadFileHeader {
  char magic[8];
  uint16_t version;
  uint16_t header_size;        // kHeaderSize
  uint32_t chunk_size;         // bytes per chunk, a multiple of 4096
  uint32_t pid;
  uint32_t tid;
  uint32_t clock;              // ClockKind
  uint32_t flags;              // kFlag* below
  uint64_t start_ticks;        // clock reading when the thread's recording started
  uint64_t committed_end;      // file offset up to which chunks are complete
  uint64_t end_offset;         // file offset of the end of data once finished, else 0
  uint64_t unmatched_exits;    // exits that matched no open frame (dropped)
  uint64_t lost_events;        // events the runtime could not store (e.g. disk full)
  char thread_name[16];        // from PR_GET_NAME at the end, NUL padded
  char process_key[32];        // "<pid>.<generation>", NUL padded
  uint64_t burst_ticks;        // ticks of the PAUSEs the fenced hooks caught (host bursts)
  uint64_t burst_count;        // how many (0 in files from before these fields)
  // The fenced entry hooks' stretch from their first clock read to their record's: the
  // ticks it took, bursts left out, and the bursts it caught (0: none, or an older file).
  // Their ratio is the rate compensation applies to the probes' unchecked ticks.
  uint64_t entry_checked_ticks;
  uint64_t entry_burst_ticks;
  // Version 7: the compact ENTER and EXIT records (version 6 forms) carry their time delta
  // in units of 2^tick_shift ticks: the clock's own step, where every reading is a
  // multiple of it (a VM's scaled TSC). 0 in older versions. SPECIAL records keep ticks.
  uint32_t tick_shift;
  uint8_t reserved[kHeaderSize - 156];
};
static_assert(sizeof(ThreadFileHeader) == kHeaderSize, "header must fill one page");

inline constexpr uint32_t kFlagFinished = 1u << 0;   // END was written
inline constexpr uint32_t kFlagForkChild = 1u << 1;  // stream starts with INHERIT frames
inline constexpr uint32_t kFlagStopped = 1u << 2;    // recording stopped early (no space)
inline constexpr uint32_t kFlagSandboxed = 1u << 3;  // ... at a seccomp filter (with bit 2)

// ---- event encoding --------------------------------------------------------------
// Every record starts with an unsigned LEB128 value V; its two low bits are the kind.
// The first byte of a record is never 0: a 0 byte ends the records of a chunk.
// Encoding state (time base, last address) resets to 0 at the start of every chunk.
enum RecordKind : uint32_t {
  kKindEnter = 1,    // V = dt<<2|1, then zigzag LEB128 (addr - last_addr)
  kKindExit = 2,     // V = dt<<2|2
  kKindSpecial = 3,  // V = ((code<<1 | nested)<<2)|3, then LEB128 time, then fields
};

// ---- version 6: ENTER and EXIT ---------------------------------------------------
// SPECIAL records keep their v5 form (V & 3 == 3, kPadByte). ENTER and EXIT take the rest of
// the head's values, by its low bits:
//   ...0  EXIT:           V = dt << 1 (dt = 0 is written 0x80 0x00: a byte 0 ends a chunk)
//   0001  ENTER guessed:  V = dt << 4 | 1; the address is next[slot(A)]
//   1001  ENTER cached:   V = dt << 14 | s << 4 | 9; the address is cache[s]
//   .101  ENTER new:      V = dt << 3 | 5, then zigzag LEB128 of (addr - A)
// After every ENTER of `addr` (and a depth-0 SPECIAL ENTER): next[slot(A)] = addr,
// cache[slot(addr)] = addr, A = addr. Both tables hold kAddrSlots addresses, all 0 at the
// start of a chunk, like A. Any form that fits decodes right; writers pick the first that
// fits, in that order (choose_enter_v6).
inline constexpr unsigned kAddrSlotBits = 10;
inline constexpr unsigned kAddrSlots = 1u << kAddrSlotBits;
inline constexpr uint64_t kV6GuessedTag = 1;   // V & 15
inline constexpr uint64_t kV6CachedTag = 9;    // V & 15
inline constexpr uint64_t kV6NewTag = 5;       // V & 7
inline constexpr unsigned kV6GuessedShift = 4;
inline constexpr unsigned kV6CachedShift = 4 + kAddrSlotBits;
inline constexpr unsigned kV6NewShift = 3;

// The table slot of a function address: functions are usually 16-byte aligned, and the
// bits above the slot's fold in so that functions 16 KiB apart do not always collide.
inline constexpr unsigned addr_slot(uint64_t addr) {
  return static_cast<unsigned>((addr >> 4) ^ (addr >> 14)) & (kAddrSlots - 1);
}

// The v6 encoding state shared by writers and readers: the last entered address and the
// two tables. `reset` at every chunk start.
struct AddrTables {
  uint64_t cache[kAddrSlots];
  uint64_t next[kAddrSlots];
  void clear() { __builtin_memset(this, 0, sizeof *this); }
};

// Codes of special records. When `nested` is set the record was written by a hook that
// interrupted another hook (a signal): its time is absolute ticks and it does not move
// the encoding state. Otherwise the time is a delta that moves the time base.
enum SpecialCode : uint32_t {
  kCodeEnter = 0,    // addr (absolute LEB128). Only written nested.
  kCodeExit = 1,     // no fields. Only written nested.
  kCodeUnwind = 2,   // count, reason (UnwindReason): closes `count` open frames
  kCodeEnd = 3,      // thread finished; frames still open close here
  kCodeFork = 4,     // child pid: this process forked
  kCodeExec = 5,     // the process called exec; if last record, frames close here
  kCodeInherit = 6,  // count, then count absolute addresses: frames open at fork,
                     // outermost first (several INHERIT records append)
  kCodeLost = 7,     // count: events that could not be recorded here
  kCodeSync = 8,     // monotonic ns: a (ticks, ns) pair for clock calibration
  kCodePad = 9,      // one byte (0x4B), NO time field: filler the reader skips
  kCodeArgs = 10,    // payload length, payload: the arguments of the call just entered
  kCodeRetval = 11,  // payload length, payload: the return value of the call just exited
                     // (format/args.hpp)
  kCodePause = 12,   // ticks: the recorder held the thread that long, ending at the record's
                     // time (growing the trace file, a module rescan, a host burst inside a
                     // fenced probe); the calls open then did not run
  kCodeCalib = 13,   // inner, outer (ticks x kCalibScale): the probe cost measured on this
                     // thread just now (a calibration in the run, inside the PAUSE that
                     // follows); it applies to the calls that close after it
  kCodeClock = 14,   // no fields: the innermost open call read a clock (clock_gettime,
                     // gettimeofday, time, clock) since the last record; its time may be
                     // bound by the clock rather than by its work (version 4)
  kCodeHidden = 15,  // filtered, taken back, capture ticks: since the record before, the
                     // innermost open call made `filtered` calls whose probes ran but
                     // recorded nothing (a record-time name, depth or overflow filter) and
                     // `taken back` calls the duration filter removed, and the recorder
                     // spent `capture ticks` capturing argument and return values; their
                     // cost is the recorder's, not the call's (version 5)
};

// Fixed-point scale of a CALIB record's costs (1/256 tick).
inline constexpr uint64_t kCalibScale = 256;

// The single byte of a PAD record: ((kCodePad << 1) << 2) | kKindSpecial.
inline constexpr uint8_t kPadByte = 0x4B;

enum class UnwindReason : uint32_t {
  kException = 1,  // left by C++ exception unwinding
  kLongjmp = 2,    // abandoned by longjmp/siglongjmp
  kUnknown = 3,    // an exit skipped over them (unmatched frames)
  kSuspended = 4,  // set aside by a ucontext switch; an INHERIT brings them back on resume
};

// Largest encoded ENTER or EXIT record (ENTER: 10 + 10 bytes). SPECIAL records may be longer
// (ARGS carries up to 1 KiB of values).
inline constexpr size_t kMaxRecordBytes = 40;

inline constexpr uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline constexpr int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Bytes needed to encode v as unsigned LEB128 (a table on the bit length: the runtime's
// hot path calls this for every record).
inline constexpr uint8_t kLeb128BytesForClz[64] = {
      10, 9, 9, 9, 9, 9, 9, 9, 8, 8, 8, 8, 8, 8, 8, 7, 7, 7, 7, 7, 7, 7,
      6,  6, 6, 6, 6, 6, 6, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4,
      3,  3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1};
inline constexpr unsigned leb128_size(uint64_t v) {
  return kLeb128BytesForClz[__builtin_clzll(v | 1)];
}

// Writes v as unsigned LEB128 at p; returns the byte after it.
inline uint8_t* leb128_put(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

inline constexpr uint64_t special_head(SpecialCode code, bool nested) {
  return ((static_cast<uint64_t>(code) << 1 | (nested ? 1 : 0)) << 2) | kKindSpecial;
}

// ---- version 6 encoders (the runtime's slow paths, TraceWriter, tests) ----------------

// A v6 ENTER as chosen from the state: its head value V, and for a new address the zigzag
// delta that follows it. The forms are tried in the order guessed, cached, new; each only
// while dt << shift fits in 64 bits (a chunk's first record carries the absolute time).
struct EnterV6 {
  uint64_t v;
  uint64_t z;
  bool has_delta;
};
inline EnterV6 choose_enter_v6(const AddrTables& t, uint64_t last, uint64_t addr, uint64_t dt) {
  if (t.next[addr_slot(last)] == addr && (dt >> (64 - kV6GuessedShift)) == 0)
    return {dt << kV6GuessedShift | kV6GuessedTag, 0, false};
  const unsigned slot = addr_slot(addr);
  if (t.cache[slot] == addr && (dt >> (64 - kV6CachedShift)) == 0)
    return {dt << kV6CachedShift | uint64_t{slot} << 4 | kV6CachedTag, 0, false};
  return {dt << kV6NewShift | kV6NewTag, zigzag(static_cast<int64_t>(addr - last)), true};
}

// Moves the state past an ENTER of `addr` (`last` is the state's last address).
inline void note_enter_v6(AddrTables& t, uint64_t& last, uint64_t addr) {
  t.next[addr_slot(last)] = addr;
  t.cache[addr_slot(addr)] = addr;
  last = addr;
}

// Bytes of a v6 ENTER.
inline unsigned enter_v6_size(const EnterV6& e) {
  return leb128_size(e.v) + (e.has_delta ? leb128_size(e.z) : 0);
}

// Writes a v6 ENTER at p; returns the byte after it.
inline uint8_t* put_enter_v6(uint8_t* p, const EnterV6& e) {
  p = leb128_put(p, e.v);
  return e.has_delta ? leb128_put(p, e.z) : p;
}

// A v6 EXIT after dt ticks (dt < 2^63) at p; returns the byte after it. dt = 0 takes two
// bytes, 0x80 0x00: a record never starts with a byte 0.
inline uint8_t* put_exit_v6(uint8_t* p, uint64_t dt) {
  if (dt == 0) {
    p[0] = 0x80;
    p[1] = 0;
    return p + 2;
  }
  return leb128_put(p, dt << 1);
}
inline unsigned exit_v6_size(uint64_t dt) { return dt == 0 ? 2 : leb128_size(dt << 1); }

}  // namespace callmon::format
