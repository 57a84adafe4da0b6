// Reads one thread event file (`<key>.<tid>.events`) record by record, chunk by chunk, with
// memory bounded by one chunk whatever the file size. Validates the header and every record;
// a file cut short (a crash, a full disk) is read up to the cut and the loss is reported.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "callmon/format/records.hpp"
#include "format/leb128_decode.hpp"
#include "format/module_lifetimes.hpp"
#include "format/result.hpp"

namespace callmon::format {

// The form of the record an event came from, for the bytes census (record_census.hpp).
enum RecordForm : uint8_t {
  kFormOther,          // any other SPECIAL record (PAUSE, UNWIND, INHERIT, ...)
  kFormExit,           // a depth-0 EXIT
  kFormEnterV5,        // a depth-0 ENTER of versions 1-5
  kFormEnterNew,       // version 6: a new address (its delta follows)
  kFormEnterCached,    // version 6: an address of the cache
  kFormEnterGuessed,   // version 6: the guessed next callee
  kFormNested,         // a nested ENTER or EXIT (SPECIAL)
  kFormValues,         // ARGS or RETVAL
};
inline constexpr size_t kRecordForms = 8;

// One decoded record. Times are absolute ticks of the process clock.
struct Event {
  enum Type : uint8_t {
    kEnter,    // addr: a call began
    kExit,     // the innermost open call returned
    kUnwind,   // count innermost open calls ended; reason
    kEnd,      // the thread finished (meaningful when last)
    kFork,     // count = child pid
    kExec,     // the process called exec (meaningful when last)
    kInherit,  // addr: one frame open at fork, outermost first
    kLost,     // count events could not be stored
    kSync,     // count = monotonic ns at ticks
    kPause,    // count ticks up to `ticks` were the recorder's, not the program's
    kCalib,    // count, addr: inner and outer probe cost measured here (ticks x kCalibScale)
    kClock,    // the innermost open call read a clock
    kHidden,   // count, addr, capture: probe pairs filtered out, pairs taken back and
               // capture ticks since the record before, in the innermost open call
               // (kCodeHidden)
    // kArgs and kRetval stay last: the call walk tests `type >= kArgs` to set them apart.
    kArgs,     // data/size: the argument values (format/args.hpp) of the innermost open call
    kRetval,   // data/size: the return value of the call whose EXIT came just before (of the
               // same nesting: a nested RETVAL follows a nested EXIT)
  };
  Type type = kEnter;
  bool nested = false;  // written by a hook interrupted by a signal
  RecordForm form = kFormOther;  // the record's form (for the bytes census only)
  uint8_t addr_bytes = 0;        // a depth-0 ENTER's address field bytes (0: none)
  uint32_t reason = 0;  // UnwindReason for kUnwind
  uint64_t ticks = 0;
  uint64_t addr = 0;
  uint64_t count = 0;
  uint64_t capture = 0;  // kHidden: ticks the recorder spent capturing values
  // kArgs/kRetval: the payload (decode with format/arg_values.hpp). It points into the
  // reader's current chunk: valid until the next call of next() on the same reader.
  const uint8_t* data = nullptr;
  uint32_t size = 0;
};

// What a reader found wrong in a file without being unable to read it.
struct ReadDamage {
  uint64_t bytes_missing = 0;   // committed or claimed data beyond the end of the file
  uint64_t bad_records = 0;     // chunks abandoned at an undecodable record
  std::vector<std::string> notes;  // one sentence each, for warnings; they do not name
                                   // the file (the caller prefixes its name)
};

class ThreadReader {
 public:
  // Opens and validates the header. Errors: missing file, not a callmon thread file,
  // unsupported version, impossible header values.
  static Result<ThreadReader> open(const std::string& path);

  ThreadReader(ThreadReader&& other) noexcept;
  ThreadReader& operator=(ThreadReader&& other) noexcept;
  ThreadReader(const ThreadReader&) = delete;
  ~ThreadReader();

  const ThreadFileHeader& header() const { return header_; }
  const std::string& path() const { return path_; }
  uint64_t file_size() const { return file_size_; }

  // Decodes the next record into `ev`. Returns false at the end of the data (or at a cut).
  // Never fails: damage is recorded in damage() and reading stops or resumes at the next
  // chunk.
  bool next(Event& ev) {
    if (compact_) {
      if (!decode_compact(ev) && !decode(ev)) return false;
    } else if (!decode_plain(ev) && !decode(ev)) {
      return false;
    }
    if (lifetimes_ != nullptr && (ev.type == Event::kEnter || ev.type == Event::kInherit))
        [[unlikely]]
      ev.addr = lifetimes_->tag(ev.addr, ev.ticks);
    return true;
  }

  // From now on, tags the addresses of calls into a module that was replaced at its
  // addresses later (module_lifetimes.hpp); `lifetimes` (of this thread's process) must
  // outlive the reader. Every analysis of calls asks for this; `dump` does not.
  void use_module_lifetimes(const ModuleLifetimes& lifetimes) {
    lifetimes_ = lifetimes.active() ? &lifetimes : nullptr;
  }

  // Decodes the run of plain ENTER and EXIT records (not nested, nothing but a time and,
  // for an ENTER, an address) that starts at the current position, up to `room` of them,
  // narrowly: kinds[i] is Event::kEnter or kExit, ticks[i] its time, and the k-th ENTER's
  // address (module-tagged as next() tags it) is addrs[k]; `enters` gets how many ENTERs.
  // Stops before the first record that is anything else, and wherever next() would not
  // take its fast path (the last 16 bytes of a chunk, an INHERIT being read), leaving
  // that record to next(). The records, the reader's state and its counters are exactly
  // those of as many next() calls: the two may be mixed freely. Returns the records
  // decoded (0: call next()). kinds, ticks and addrs must each have `room` elements.
  size_t next_plain_run(uint8_t* kinds, uint64_t* ticks, uint64_t* addrs, size_t room,
                        size_t& enters);

  // The chunks the records are read from: the file's whole chunks and a last, partial one.
  uint64_t chunk_count() const { return chunk_count_; }

  // Reads only chunks [first, end) from now on (end clipped to chunk_count()), for a walk of
  // part of a thread (docs/report.md, "Splitting one thread"). Call before the first next().
  // A chunk decodes from its own beginning (its encoding state starts empty, its first
  // record's time is absolute: docs/format.md), so the records are those a whole read yields
  // from chunk `first` on, with two differences a caller stitching parts must check: time
  // is clamped only against the part's own records (a whole read also clamps against the
  // chunks before), and a chunk before `first` that begins with a byte 0 would have ended a
  // whole read there. Damage notes and counters cover the part's chunks only.
  void restrict_chunks(uint64_t first, uint64_t end) {
    chunk_count_ = std::min(chunk_count_, end);
    chunk_index_ = std::max(chunk_index_, first);
  }

  // Bytes of records consumed so far (for progress and bytes-per-call figures).
  uint64_t bytes_read() const { return bytes_read_; }
  const ReadDamage& damage() const { return damage_; }

 private:
  ThreadReader() = default;
  // next() without the module tags.
  bool decode(Event& ev);
  // The fast path of decode(), inline in next() so that the walk's loop keeps the record
  // in registers: an ENTER or EXIT with 16 bytes left in the chunk, both decoded the same
  // way without a branch on the kind (which varies at random). For an EXIT the second value
  // is decoded from the next record's bytes and discarded. False: anything else, left to
  // decode().
  bool decode_plain(Event& ev) {
    const uint8_t* p = pos_;
    if (inherit_left_ != 0 || end_ - p < 16) [[unlikely]]
      return false;
    uint64_t v, z;
    const unsigned len1 = leb128_word(load_word(p), v);
    const uint64_t kind = v & 3;
    if (len1 == 0 || (kind != kKindEnter && kind != kKindExit)) [[unlikely]]
      return false;
    const unsigned len2 = leb128_word(load_word(p + len1), z);
    const uint64_t enter = kind & 1;
    if (len2 == 0 && enter) [[unlikely]]
      return false;
    const uint64_t mask = 0 - enter;
    time_base_ += v >> 2;
    last_addr_ += static_cast<uint64_t>(unzigzag(z)) & mask;
    if (time_base_ > last_ticks_) last_ticks_ = time_base_;
    calls_read_ += enter;
    const unsigned n = len1 + (len2 & static_cast<unsigned>(mask));
    ev.type = enter ? Event::kEnter : Event::kExit;
    ev.nested = false;
    ev.form = enter ? kFormEnterV5 : kFormExit;
    ev.addr_bytes = static_cast<uint8_t>(len2 & static_cast<unsigned>(mask));
    ev.reason = 0;
    ev.ticks = last_ticks_;
    ev.addr = last_addr_ & mask;
    ev.count = 0;
    ev.data = nullptr;
    ev.size = 0;
    bytes_read_ += n;
    pos_ = p + n;
    return true;
  }
  // decode_plain for version 6 (callmon/format/records.hpp): the four forms of ENTER and
  // EXIT decoded alike, without a branch on the form. The address is chosen among the
  // guess, the cached slot and the delta; the tables are stored back unconditionally (for
  // an EXIT the stores write what they hold: cache[slot(A)] is A after any record).
  bool decode_compact(Event& ev) {
    const uint8_t* p = pos_;
    if (inherit_left_ != 0 || end_ - p < 16) [[unlikely]]
      return false;
    const uint64_t w = load_word(p);
    uint64_t v, z;
    const unsigned len1 = leb128_word(w, v);
    if (len1 == 0 || (w & 0xff) == 0 || (v & 3) == kKindSpecial) [[unlikely]]
      return false;
    const unsigned len2 = leb128_word(load_word(p + len1), z);
    const bool is_new = (v & 7) == kV6NewTag;
    if (len2 == 0 && is_new) [[unlikely]]
      return false;
    const bool enter = (v & 1) != 0;
    const bool cached = (v & 15) == kV6CachedTag;
    time_base_ += (v >> kCompactShift[v & 15]) << tick_shift_;
    if (time_base_ > last_ticks_) last_ticks_ = time_base_;
    const uint64_t last = last_addr_;
    AddrTables& t = *tables_;
    uint64_t* next = &t.next[addr_slot(last)];
    const uint64_t guess = *next;
    const uint64_t from_cache = t.cache[(v >> 4) & (kAddrSlots - 1)];
    uint64_t addr = is_new ? last + static_cast<uint64_t>(unzigzag(z)) : from_cache;
    addr = (is_new | cached) ? addr : guess;
    addr = enter ? addr : last;
    *next = enter ? addr : guess;
    t.cache[addr_slot(addr)] = addr;
    last_addr_ = addr;
    calls_read_ += enter;
    const unsigned n = len1 + (is_new ? len2 : 0);
    ev.type = enter ? Event::kEnter : Event::kExit;
    ev.nested = false;
    ev.form = kCompactForm[v & 15];
    ev.addr_bytes = static_cast<uint8_t>(is_new ? len2 : 0);
    ev.reason = 0;
    ev.ticks = last_ticks_;
    ev.addr = enter ? addr : 0;
    ev.count = 0;
    ev.data = nullptr;
    ev.size = 0;
    bytes_read_ += n;
    pos_ = p + n;
    return true;
  }
  // The shift of a v6 head's time by its low 4 bits (SPECIAL heads: unused).
  static constexpr uint8_t kCompactShift[16] = {1, kV6GuessedShift, 1, 0, 1, kV6NewShift, 1, 0,
                                                1, kV6CachedShift, 1, 0, 1, kV6NewShift, 1, 0};
  // The form of a v6 ENTER or EXIT by its head's low 4 bits (SPECIAL heads: unused).
  static constexpr RecordForm kCompactForm[16] = {
      kFormExit, kFormEnterGuessed, kFormExit, kFormOther, kFormExit, kFormEnterNew,
      kFormExit, kFormOther, kFormExit, kFormEnterCached, kFormExit, kFormOther,
      kFormExit, kFormEnterNew, kFormExit, kFormOther};
  static uint64_t load_word(const uint8_t* p) {
    uint64_t w;
    std::memcpy(&w, p, sizeof w);
    return w;
  }
  // One LEB128 value from the 8 bytes of `w`: its length, or 0 when it is longer.
  static unsigned leb128_word(uint64_t w, uint64_t& out) { return detail::leb128_word(w, out); }
  bool map_chunk(uint64_t index);
  void unmap();
  // Maps the next chunk and resets the encoding state; false (and finish()) at the end.
  bool advance_chunk();
  // Decodes the version 6 ENTER or EXIT whose head V was read; p points after V and is
  // advanced. False when the record is bad (the chunk was abandoned).
  bool decode_compact_record(uint64_t v, const uint8_t*& p, Event& ev);
  // Decodes the SPECIAL record whose head V was read; p points after V and is advanced.
  // False when the record is bad (the chunk was abandoned).
  bool decode_special(uint64_t v, const uint8_t*& p, Event& ev);
  // Yields the next address of an INHERIT record already validated.
  bool next_inherited(Event& ev);
  // Abandons the current chunk at the record starting at `rec`: a bad record, or the end
  // of a file cut inside a record when `past_end` and the chunk is clipped by the file end.
  void abandon_chunk(const uint8_t* rec, const char* what, bool past_end);
  void note_bad_record(const char* what);
  // Called once at the end of the data: unmaps and completes the damage notes.
  void finish();

  std::string path_;
  ThreadFileHeader header_{};
  int fd_ = -1;
  uint64_t file_size_ = 0;
  uint64_t chunk_count_ = 0;
  uint64_t chunk_index_ = 0;       // the next chunk to map
  const uint8_t* map_ = nullptr;   // current chunk mapping
  size_t map_len_ = 0;
  const uint8_t* pos_ = nullptr;
  const uint8_t* end_ = nullptr;
  uint64_t time_base_ = 0;
  uint64_t last_addr_ = 0;
  uint64_t last_ticks_ = 0;      // for clamping time that steps back
  bool compact_ = false;         // version 6 records (kCompactVersion)
  uint32_t tick_shift_ = 0;      // their deltas' unit, 2^tick_shift_ ticks (version 7)
  std::unique_ptr<AddrTables> tables_;  // their encoding state, cleared at each chunk
  uint64_t inherit_left_ = 0;    // addresses still to read of an INHERIT record
  bool inherit_nested_ = false;  // the nested flag of that INHERIT record
  uint64_t bytes_read_ = 0;
  uint64_t calls_read_ = 0;      // ENTER records, for the bytes-per-call estimate
  uint64_t claimed_end_ = 0;     // max(committed_end, end_offset) when beyond the file
  size_t missing_note_ = 0;      // index in damage_.notes of the bytes-missing note + 1
  bool done_ = false;
  const ModuleLifetimes* lifetimes_ = nullptr;
  ReadDamage damage_;
};

}  // namespace callmon::format
