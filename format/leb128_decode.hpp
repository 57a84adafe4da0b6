// Bounds-checked LEB128 decoding for the thread reader's hot loop. Kept inline (and apart
// from records.hpp, which the runtime shares) so that next() decodes without a call.
#pragma once

#include <cstdint>

namespace callmon::format::detail {

enum class LebStatus : uint8_t { kOk, kPastEnd, kTooLong };

// Decodes the unsigned LEB128 value at p (never reading at or past `end`) into `out` and
// advances p past it. kPastEnd: the value runs past `end`; kTooLong: more than 10 bytes or
// more than 64 bits. On failure p and out are unchanged.
inline LebStatus leb128_get(const uint8_t*& p, const uint8_t* end, uint64_t& out) {
  const uint8_t* q = p;
  if (q < end && *q < 0x80) [[likely]] {
    out = *q;
    p = q + 1;
    return LebStatus::kOk;
  }
  uint64_t v = 0;
  unsigned shift = 0;
  // When 10 bytes are available the per-byte bounds check is not needed: every valid value
  // fits in 10 bytes. This is the common path for 2- and 3-byte values.
  if (end - q >= 10) [[likely]] {
    for (int i = 0; i < 9; ++i, shift += 7) {
      uint8_t b = *q++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        out = v;
        p = q;
        return LebStatus::kOk;
      }
    }
    uint8_t b = *q++;
    if (b > 1) return LebStatus::kTooLong;  // a continuation bit or bits beyond 64
    out = v | static_cast<uint64_t>(b) << 63;
    p = q;
    return LebStatus::kOk;
  }
  for (int i = 0; i < 10; ++i, shift += 7) {
    if (q >= end) return LebStatus::kPastEnd;
    uint8_t b = *q++;
    if (i == 9 && b > 1) return LebStatus::kTooLong;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      out = v;
      p = q;
      return LebStatus::kOk;
    }
  }
  return LebStatus::kTooLong;
}

}  // namespace callmon::format::detail
