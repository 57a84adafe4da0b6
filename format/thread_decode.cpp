// ThreadReader's record decoder (docs/format.md, "Chunks and records"): versions 1-5 and
// the compact ENTER and EXIT of version 6. next() is the hot loop of every analysis: one
// switch on the record kind, LEB128 decoded inline, no allocation. Anything undecodable abandons the rest of its chunk (see abandon_chunk).
#include <algorithm>
#include <cstring>

#include "format/leb128_decode.hpp"
#include "format/thread_reader.hpp"

namespace callmon::format {
namespace {

using detail::leb128_get;
using detail::leb128_word;
using detail::LebStatus;

// Larger counts cannot come from a real stack: the record is corrupt.
constexpr uint64_t kMaxFrameCount = 10'000'000;
// More calls than this between two records of one thread is a corrupt HIDDEN record (a
// thread makes fewer than 10^10 calls a minute).
constexpr uint64_t kMaxHiddenCount = uint64_t{1} << 40;
// PID_MAX_LIMIT on 64-bit Linux.
constexpr uint64_t kMaxPid = 4'194'304;

const char* leb_problem(LebStatus st) {
  return st == LebStatus::kPastEnd ? "a value runs past the end of the chunk"
                                   : "a value is longer than 10 bytes";
}

inline uint64_t load64(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

inline void set_event(Event& ev, Event::Type type, bool nested, uint64_t ticks, uint64_t addr,
                      uint64_t count, uint32_t reason, RecordForm form = kFormOther,
                      unsigned addr_bytes = 0) {
  ev.type = type;
  ev.nested = nested;
  ev.form = form;
  ev.addr_bytes = static_cast<uint8_t>(addr_bytes);
  ev.reason = reason;
  ev.ticks = ticks;
  ev.addr = addr;
  ev.count = count;
  ev.data = nullptr;
  ev.size = 0;
}

}  // namespace

bool ThreadReader::decode(Event& ev) {
  if (inherit_left_ != 0) [[unlikely]]
    return next_inherited(ev);
  for (;;) {
    const uint8_t* p = pos_;
    // Fast path for ENTER and EXIT, the bulk of every stream, when 16 bytes remain in the
    // chunk: both are decoded the same way, without a branch on the kind (which varies at
    // random). For an EXIT the second value is decoded from the next record's bytes and
    // discarded.
    if (!compact_ && end_ - p >= 16) [[likely]] {
      uint64_t v, z;
      const unsigned len1 = leb128_word(load64(p), v);
      const uint64_t kind = v & 3;
      if (len1 != 0 && (kind == kKindEnter || kind == kKindExit)) [[likely]] {
        const unsigned len2 = leb128_word(load64(p + len1), z);
        const uint64_t enter = kind & 1;
        if (len2 != 0 || !enter) [[likely]] {
          const uint64_t mask = 0 - enter;
          time_base_ += v >> 2;
          last_addr_ += static_cast<uint64_t>(unzigzag(z)) & mask;
          last_ticks_ = std::max(last_ticks_, time_base_);
          calls_read_ += enter;
          const unsigned n = len1 + (len2 & static_cast<unsigned>(mask));
          set_event(ev, enter ? Event::kEnter : Event::kExit, false, last_ticks_,
                    last_addr_ & mask, 0, 0, enter ? kFormEnterV5 : kFormExit,
                    len2 & static_cast<unsigned>(mask));
          bytes_read_ += n;
          pos_ = p + n;
          return true;
        }
      }
    }
    if (p >= end_ || *p == 0) [[unlikely]] {
      if (!advance_chunk()) return false;
      continue;
    }
    uint64_t v;
    LebStatus st = leb128_get(p, end_, v);
    if (st != LebStatus::kOk) [[unlikely]] {
      abandon_chunk(pos_, leb_problem(st), st == LebStatus::kPastEnd);
      continue;
    }
    if (compact_ && (v & 3) != kKindSpecial) {
      if (!decode_compact_record(v, p, ev)) continue;
      bytes_read_ += static_cast<uint64_t>(p - pos_);
      pos_ = p;
      return true;
    }
    switch (v & 3) {
      case kKindEnter: {
        uint64_t z;
        const uint8_t* at = p;
        st = leb128_get(p, end_, z);
        if (st != LebStatus::kOk) [[unlikely]] {
          abandon_chunk(pos_, leb_problem(st), st == LebStatus::kPastEnd);
          continue;
        }
        time_base_ += v >> 2;
        last_addr_ += static_cast<uint64_t>(unzigzag(z));
        last_ticks_ = std::max(last_ticks_, time_base_);
        set_event(ev, Event::kEnter, false, last_ticks_, last_addr_, 0, 0, kFormEnterV5,
                  static_cast<unsigned>(p - at));
        ++calls_read_;
        break;
      }
      case kKindExit:
        time_base_ += v >> 2;
        last_ticks_ = std::max(last_ticks_, time_base_);
        set_event(ev, Event::kExit, false, last_ticks_, 0, 0, 0, kFormExit);
        break;
      case kKindSpecial:
        if (v == kPadByte) {  // filler of one byte, no time field: skipped
          bytes_read_ += 1;
          pos_ = p;
          continue;
        }
        if (!decode_special(v, p, ev)) continue;
        break;
      default:
        abandon_chunk(pos_, "a record of unknown kind 0", false);
        continue;
    }
    bytes_read_ += static_cast<uint64_t>(p - pos_);
    pos_ = p;
    return true;
  }
}

bool ThreadReader::decode_compact_record(uint64_t v, const uint8_t*& p, Event& ev) {
  if ((v & 1) == 0) {
    time_base_ += (v >> 1) << tick_shift_;
    last_ticks_ = std::max(last_ticks_, time_base_);
    set_event(ev, Event::kExit, false, last_ticks_, 0, 0, 0, kFormExit);
    return true;
  }
  uint64_t addr;
  RecordForm form;
  const uint8_t* at = p;
  if ((v & 7) == kV6NewTag) {
    form = kFormEnterNew;
    uint64_t z;
    LebStatus st = leb128_get(p, end_, z);
    if (st != LebStatus::kOk) [[unlikely]] {
      abandon_chunk(pos_, leb_problem(st), st == LebStatus::kPastEnd);
      return false;
    }
    addr = last_addr_ + static_cast<uint64_t>(unzigzag(z));
    time_base_ += (v >> kV6NewShift) << tick_shift_;
  } else if ((v & 15) == kV6CachedTag) {
    form = kFormEnterCached;
    addr = tables_->cache[(v >> 4) & (kAddrSlots - 1)];
    time_base_ += (v >> kV6CachedShift) << tick_shift_;
  } else {
    form = kFormEnterGuessed;
    addr = tables_->next[addr_slot(last_addr_)];
    time_base_ += (v >> kV6GuessedShift) << tick_shift_;
  }
  note_enter_v6(*tables_, last_addr_, addr);
  last_ticks_ = std::max(last_ticks_, time_base_);
  set_event(ev, Event::kEnter, false, last_ticks_, addr, 0, 0, form,
            static_cast<unsigned>(p - at));
  ++calls_read_;
  return true;
}

bool ThreadReader::decode_special(uint64_t v, const uint8_t*& p, Event& ev) {
  const uint8_t* rec = pos_;
  const uint64_t code = v >> 3;
  const bool nested = (v >> 2) & 1;
  uint64_t fields[3] = {0, 0, 0};
  // Reads `n` LEB128 values into `out`; abandons the chunk on failure.
  auto read = [&](uint64_t* out, int n) {
    for (int i = 0; i < n; ++i) {
      LebStatus st = leb128_get(p, end_, out[i]);
      if (st != LebStatus::kOk) {
        abandon_chunk(rec, leb_problem(st), st == LebStatus::kPastEnd);
        return false;
      }
    }
    return true;
  };
  uint64_t t;
  if (!read(&t, 1)) return false;
  Event::Type type;
  uint64_t addr = 0, count = 0, capture = 0;
  uint32_t reason = 0;
  const uint8_t* payload = nullptr;
  switch (code) {
    case kCodeEnter:
      if (!read(fields, 1)) return false;
      type = Event::kEnter;
      addr = fields[0];
      ++calls_read_;
      break;
    case kCodeExit:
      type = Event::kExit;
      break;
    case kCodeUnwind:
      if (!read(fields, 2)) return false;
      if (fields[1] < 1 || fields[1] > 4) {
        abandon_chunk(rec, "an UNWIND record with a reason other than 1..4", false);
        return false;
      }
      if (fields[0] > kMaxFrameCount) {
        abandon_chunk(rec, "an UNWIND record with an impossible count", false);
        return false;
      }
      type = Event::kUnwind;
      count = fields[0];
      reason = static_cast<uint32_t>(fields[1]);
      break;
    case kCodeEnd:
      type = Event::kEnd;
      break;
    case kCodeFork:
      if (!read(fields, 1)) return false;
      if (fields[0] == 0 || fields[0] > kMaxPid) {
        abandon_chunk(rec, "a FORK record with an impossible child pid", false);
        return false;
      }
      type = Event::kFork;
      count = fields[0];
      break;
    case kCodeExec:
      type = Event::kExec;
      break;
    case kCodeInherit: {
      if (!read(fields, 1)) return false;
      if (fields[0] > kMaxFrameCount) {
        abandon_chunk(rec, "an INHERIT record with an impossible count", false);
        return false;
      }
      // Validate every address before yielding the first, so that a bad record yields
      // nothing; next_inherited() then decodes the rest without checks.
      const uint8_t* first = p;
      for (uint64_t i = 0; i < fields[0]; ++i)
        if (!read(&addr, 1)) return false;
      p = first;
      if (fields[0] == 0) {
        bytes_read_ += static_cast<uint64_t>(p - rec);
        pos_ = p;
        if (!nested) time_base_ += t;
        return false;  // no event: next() goes on with the next record
      }
      (void)leb128_get(p, end_, addr);
      inherit_left_ = fields[0] - 1;
      inherit_nested_ = nested;
      type = Event::kInherit;
      break;
    }
    case kCodeLost:
      if (!read(fields, 1)) return false;
      type = Event::kLost;
      count = fields[0];
      break;
    case kCodeSync:
      if (!read(fields, 1)) return false;
      type = Event::kSync;
      count = fields[0];
      break;
    case kCodePause:
      if (!read(fields, 1)) return false;
      type = Event::kPause;
      count = fields[0];
      break;
    case kCodeCalib:
      if (!read(fields, 2)) return false;
      if (fields[0] > fields[1] || fields[1] > (uint64_t{1} << 40)) {
        abandon_chunk(rec, "a CALIB record with impossible costs", false);
        return false;
      }
      type = Event::kCalib;
      count = fields[0];
      addr = fields[1];
      break;
    case kCodeClock:
      type = Event::kClock;
      break;
    case kCodeHidden:
      if (!read(fields, 3)) return false;
      if (fields[0] > kMaxHiddenCount || fields[1] > kMaxHiddenCount) {
        abandon_chunk(rec, "a HIDDEN record with an impossible count", false);
        return false;
      }
      type = Event::kHidden;
      count = fields[0];
      addr = fields[1];
      capture = fields[2];
      break;
    case kCodeArgs:
    case kCodeRetval:
      // The payload is only delimited here; format/arg_values.hpp decodes it.
      if (!read(fields, 1)) return false;
      if (fields[0] > static_cast<uint64_t>(end_ - p)) {
        abandon_chunk(rec, "an ARGS or RETVAL record whose payload runs past the end of the "
                      "chunk", true);
        return false;
      }
      payload = p;
      p += fields[0];
      type = code == kCodeArgs ? Event::kArgs : Event::kRetval;
      break;
    default:
      abandon_chunk(rec, "a special record of unknown code", false);
      return false;
  }
  // A nested record carries absolute time and leaves the encoding state alone.
  uint64_t ticks;
  if (nested) {
    ticks = t;
  } else {
    time_base_ += t;
    ticks = time_base_;
    if (code == kCodeEnter) note_enter_v6(*tables_, last_addr_, addr);
  }
  last_ticks_ = std::max(last_ticks_, ticks);
  const bool call = code == kCodeEnter || code == kCodeExit;
  set_event(ev, type, nested, last_ticks_, addr, count, reason,
            call ? kFormNested : payload ? kFormValues : kFormOther);
  ev.capture = capture;
  if (payload) {
    ev.data = payload;
    ev.size = static_cast<uint32_t>(p - payload);  // <= the chunk size
  }
  return true;
}

bool ThreadReader::next_inherited(Event& ev) {
  const uint8_t* p = pos_;
  uint64_t addr = 0;
  (void)leb128_get(p, end_, addr);  // validated by decode_special
  bytes_read_ += static_cast<uint64_t>(p - pos_);
  pos_ = p;
  --inherit_left_;
  set_event(ev, Event::kInherit, inherit_nested_, last_ticks_, addr, 0, 0);
  return true;
}

}  // namespace callmon::format
