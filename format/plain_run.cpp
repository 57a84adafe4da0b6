// ThreadReader::next_plain_run: the bulk of a stream (plain ENTER and EXIT records) decoded
// in one loop into narrow arrays, for the decoder that runs ahead of the call walk
// (analysis/event_prefetch.hpp). Per record it does what decode_plain or decode_compact
// does, with the reader's state in registers for the whole run and no Event written and
// read back: a record is a kind byte, a time and, for an ENTER, an address. Anything the
// fast paths would not take ends the run and is left to next().
#include "format/thread_reader.hpp"

namespace callmon::format {

size_t ThreadReader::next_plain_run(uint8_t* kinds, uint64_t* ticks, uint64_t* addrs,
                                    size_t room, size_t& enters) {
  enters = 0;
  if (inherit_left_ != 0 || done_) return 0;
  const uint8_t* p = pos_;
  const uint8_t* const end = end_;
  uint64_t time_base = time_base_;
  uint64_t last_ticks = last_ticks_;
  uint64_t last_addr = last_addr_;
  const ModuleLifetimes* const lifetimes = lifetimes_;
  size_t i = 0, e = 0;
  if (compact_) {
    AddrTables& t = *tables_;
    const uint32_t tick_shift = tick_shift_;
    // decode_compact's steps, record by record (see there for why without branches).
    while (i < room && end - p >= 16) {
      const uint64_t w = load_word(p);
      uint64_t v, z;
      const unsigned len1 = leb128_word(w, v);
      if (len1 == 0 || (w & 0xff) == 0 || (v & 3) == kKindSpecial) [[unlikely]]
        break;
      const unsigned len2 = leb128_word(load_word(p + len1), z);
      const bool is_new = (v & 7) == kV6NewTag;
      if (len2 == 0 && is_new) [[unlikely]]
        break;
      const bool enter = (v & 1) != 0;
      const bool cached = (v & 15) == kV6CachedTag;
      time_base += (v >> kCompactShift[v & 15]) << tick_shift;
      if (time_base > last_ticks) last_ticks = time_base;
      uint64_t* next = &t.next[addr_slot(last_addr)];
      const uint64_t guess = *next;
      const uint64_t from_cache = t.cache[(v >> 4) & (kAddrSlots - 1)];
      uint64_t addr = is_new ? last_addr + static_cast<uint64_t>(unzigzag(z)) : from_cache;
      addr = (is_new | cached) ? addr : guess;
      addr = enter ? addr : last_addr;
      *next = enter ? addr : guess;
      t.cache[addr_slot(addr)] = addr;
      last_addr = addr;
      kinds[i] = enter ? Event::kEnter : Event::kExit;
      ticks[i] = last_ticks;
      addrs[e] = addr;  // kept only when an ENTER (e moves on)
      if (lifetimes != nullptr && enter) [[unlikely]]
        addrs[e] = lifetimes->tag(addr, last_ticks);
      e += enter;
      ++i;
      p += len1 + (is_new ? len2 : 0);
    }
  } else {
    // decode_plain's steps, record by record.
    while (i < room && end - p >= 16) {
      uint64_t v, z;
      const unsigned len1 = leb128_word(load_word(p), v);
      const uint64_t kind = v & 3;
      if (len1 == 0 || (kind != kKindEnter && kind != kKindExit)) [[unlikely]]
        break;
      const unsigned len2 = leb128_word(load_word(p + len1), z);
      const uint64_t enter = kind & 1;
      if (len2 == 0 && enter) [[unlikely]]
        break;
      const uint64_t mask = 0 - enter;
      time_base += v >> 2;
      last_addr += static_cast<uint64_t>(unzigzag(z)) & mask;
      if (time_base > last_ticks) last_ticks = time_base;
      kinds[i] = enter ? Event::kEnter : Event::kExit;
      ticks[i] = last_ticks;
      addrs[e] = last_addr;
      if (lifetimes != nullptr && enter) [[unlikely]]
        addrs[e] = lifetimes->tag(last_addr, last_ticks);
      e += enter;
      ++i;
      p += len1 + (len2 & static_cast<unsigned>(mask));
    }
  }
  time_base_ = time_base;
  last_ticks_ = last_ticks;
  last_addr_ = last_addr;
  calls_read_ += e;
  bytes_read_ += static_cast<uint64_t>(p - pos_);
  pos_ = p;
  enters = e;
  return i;
}

}  // namespace callmon::format
