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

// Decodes a LEB128 value of at most 8 bytes held in `w` (8 bytes loaded little-endian)
// without branches: returns its length in bytes, or 0 when it is longer than 8 bytes.
// Branch-free because the lengths of real deltas vary at random, and a mispredicted
// branch costs more than these few operations.
inline unsigned leb128_word(uint64_t w, uint64_t& out) {
  const uint64_t stops = ~w & 0x8080808080808080ull;  // bytes without a continuation bit
  const unsigned len = (static_cast<unsigned>(__builtin_ctzll(stops | (1ull << 63))) >> 3) + 1;
  // Keep the bytes up to the first stop, then pack their 7-bit groups together.
  uint64_t x = w & (stops ^ (stops - 1)) & 0x7f7f7f7f7f7f7f7full;
  x = ((x & 0x7f007f007f007f00ull) >> 1) | (x & 0x007f007f007f007full);
  x = ((x & 0x3fff00003fff0000ull) >> 2) | (x & 0x00003fff00003fffull);
  x = ((x & 0x0fffffff00000000ull) >> 4) | (x & 0x000000000fffffffull);
  out = x;
  return stops == 0 ? 0 : len;
}

}  // namespace callmon::format::detail
