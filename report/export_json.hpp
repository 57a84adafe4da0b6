// Small helpers of the streamed JSON exports (chrome, speedscope): string quoting, and
// numbers printed the same way on every machine so golden files compare exactly.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace callmon::report {

// `s` as a JSON string literal with its quotes. Bytes that are not valid UTF-8 are replaced
// by U+FFFD so a stray byte in a symbol never makes the whole file unreadable.
std::string json_quote(const std::string& s);

// A duration or time point in the unit given: fixed with 3 decimals, "-0.000" never shown.
std::string fixed3(double value);
// The same appended to `out` (report/fixed_decimal.hpp: no fmt call for the usual values).
void append_fixed3(std::string& out, double value);
// An unsigned integer in decimal, appended to `out`.
void append_uint(std::string& out, uint64_t value);
// fixed3's text written at `out` (room for kFixed3Room bytes); returns its end.
constexpr size_t kFixed3Room = 320;
char* write_fixed3(char* out, double value);
// `text` copied to `out`; returns its end.
inline char* write_text(char* out, std::string_view text) {
  std::memcpy(out, text.data(), text.size());
  return out + text.size();
}

}  // namespace callmon::report
