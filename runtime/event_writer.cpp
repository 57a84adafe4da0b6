// SPECIAL records: written on slow paths (unwinding, fork, exec, end, nested hooks).
#include "runtime/event_writer.hpp"

#include <string.h>

namespace callmon::rt {

using namespace format;

void write_special(ThreadState* s, bool nested, SpecialCode code, uint64_t t,
                   const uint64_t* fields, unsigned nfields) {
  for (;;) {
    if (!nested && t < s->last_ticks) t = s->last_ticks;
    uint64_t head = special_head(code, nested);
    uint64_t time = nested ? t : t - s->last_ticks;
    unsigned n = leb128_size(head) + leb128_size(time);
    for (unsigned i = 0; i < nfields; ++i) n += leb128_size(fields[i]);
    uint8_t* p = bump(&s->cur, n);
    uint8_t* limit = nested ? s->limit + kNestedMargin : s->limit;
    if (p + n <= limit) {
      p = leb128_put(leb128_put(p, head), time);
      for (unsigned i = 0; i < nfields; ++i) p = leb128_put(p, fields[i]);
      break;
    }
    if (nested) {
      // A hook interrupted another one and the chunk's margin is used up: it may not
      // switch chunks under the interrupted writer, so the event is counted as lost. What
      // it reserved inside the chunk is padded so the records after it stay readable.
      if (p < limit) memset(p, kPadByte, static_cast<size_t>(limit - p));
      if (s->header) __atomic_fetch_add(&s->header->lost_events, 1, __ATOMIC_RELAXED);
      return;
    }
    if (!switch_chunk(s, p, n)) return;
  }
  if (!nested) s->last_ticks = t;
}

}  // namespace callmon::rt
