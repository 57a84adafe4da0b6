// The JSON exports' times as text: chrome's ts and dur (µs) and speedscope's "at" (ns), each
// fixed with 3 decimals, two per call. The text is byte for byte write_fixed3's (fmt's
// "{:.3f}" of the double, report/fixed_decimal.hpp); what differs is how the digits are
// made. A value is taken as its exact count of thousandths (fixed_units) and cut in three
// parts that are converted independently: the thousandths, the 6 digits before the point
// (two rows of a table of "000".."999") and what is above 10^9 units, whose text is kept from
// the value before: consecutive time points of one thread share it (1 s of chrome's ts, 1 ms
// of speedscope's), so it is converted again only when it changes. On a 10^8-call recording
// the divide-by-100 loop of the general writer was a third of the exports' formatting.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "report/export_json.hpp"
#include "report/fixed_decimal.hpp"

namespace callmon::report {

// "000" to "999", 4 bytes apart (the fourth a zero): three digits in one 4-byte load.
struct ThreeDigitTable {
  char text[1000][4];
  constexpr ThreeDigitTable() : text() {
    for (int i = 0; i < 1000; ++i) {
      text[i][0] = static_cast<char>('0' + i / 100);
      text[i][1] = static_cast<char>('0' + i / 10 % 10);
      text[i][2] = static_cast<char>('0' + i % 10);
      text[i][3] = 0;
    }
  }
};
inline constexpr ThreeDigitTable kThreeDigitTable;

class Fixed3Text {
 public:
  // Room write() needs at its pointer: the text (kFixed3Room bounds it) and the bytes past
  // its end that the 4-byte stores may touch (at most 4, inside that bound for the quick
  // texts, which are under 32 bytes).
  static constexpr size_t kRoom = kFixed3Room;

  // Writes write_fixed3(p, v)'s text at `p` (room for kRoom bytes) and returns its end; a
  // few bytes after the end may be overwritten (the caller's next piece goes there).
  [[gnu::always_inline]] char* write(char* p, double v) {
    uint64_t units;
    if (!quick_units(v, units)) [[unlikely]]
      return write_fixed3(p, v);
    return write_units(p, units);
  }

  // Sets `units` to v's thousandths (fixed_units) and returns true when write_units can write
  // v (v in [0, 2^53), sign bit clear); false for the values only write_fixed3 writes.
  // For writers that convert a block of values first and write their texts after.
  [[gnu::always_inline]] static bool quick_units(double v, uint64_t& units) {
    // The negation also takes NaN; the sign bit, -0.0 (write_fixed3 writes these).
    if (!(v >= 0 && v < 0x1p53) || std::signbit(v)) [[unlikely]]
      return false;
    fixed_units(v, 1000, units);
    return true;
  }

  // `units` thousandths as "I.FFF" (I without leading zeros, at least one digit).
  [[gnu::always_inline]] char* write_units(char* p, uint64_t units) {
    if (units < 1'000'000) {  // I < 1000: a duration under 1 ms (chrome's dur)
      const auto i = static_cast<uint32_t>(units / 1000);
      p = put_short(p, i);
      *p = '.';
      put3(p + 1, static_cast<uint32_t>(units - uint64_t{i} * 1000));
      return p + 4;
    }
    if (units < 1'000'000'000) {
      const auto hi = static_cast<uint32_t>(units / 1'000'000);
      const auto lo = static_cast<uint32_t>(units - uint64_t{hi} * 1'000'000);
      p = put_short(p, hi);
      return put_six(p, lo);
    }
    // The three groups below the prefix each from its own quotient of `units` (the three
    // divisions are independent), not one after the other from the remainder: a shorter
    // chain of multiplications from the value to its digits.
    const uint64_t hi = units / 1'000'000'000;
    const uint64_t mid = units / 1'000'000;
    const uint64_t low = units / 1'000;
    if (hi != prefix_of_) [[unlikely]]
      make_prefix(hi);
    std::memcpy(p, prefix_, sizeof prefix_);
    p += prefix_size_;
    put3(p, static_cast<uint32_t>(mid - hi * 1000));
    put3(p + 3, static_cast<uint32_t>(low - mid * 1000));
    p[6] = '.';
    put3(p + 7, static_cast<uint32_t>(units - low * 1000));
    return p + 10;
  }

 private:
  // Three digits (zero-padded) at p; writes p[0..3].
  static void put3(char* p, uint32_t v) { std::memcpy(p, kThreeDigitTable.text[v], 4); }
  // v < 1000 without leading zeros; writes p[0..3], returns the end of the digits.
  static char* put_short(char* p, uint32_t v) {
    const size_t n = 1 + (v >= 10) + (v >= 100);
    std::memcpy(p, kThreeDigitTable.text[v] + 3 - n, 4);  // the table's next row follows
    return p + n;
  }
  // v < 10^6 as "DDD.DDD"; writes p[0..7], returns the end.
  static char* put_six(char* p, uint32_t v) {
    const uint32_t a = v / 1000;
    put3(p, a);
    p[3] = '.';
    put3(p + 4, v - a * 1000);
    return p + 7;
  }
  // The digits of hi (>= 1, < 2^64 / 10^9: at most 11) become the prefix.
  void make_prefix(uint64_t hi) {
    char digits[24];
    char* end = digits + sizeof digits;
    char* q = end;
    for (uint64_t v = hi; v > 0; v /= 10) *--q = static_cast<char>('0' + v % 10);
    prefix_size_ = static_cast<size_t>(end - q);
    std::memcpy(prefix_, q, prefix_size_);
    prefix_of_ = hi;
  }

  uint64_t prefix_of_ = 0;  // the units / 10^9 whose digits prefix_ holds (0: none yet)
  char prefix_[16] = {};
  size_t prefix_size_ = 0;
};

}  // namespace callmon::report
