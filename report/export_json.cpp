// JSON quoting and number formatting of the streamed exports (export_json.hpp).
#include "report/export_json.hpp"

#include <fmt/format.h>

#include <charconv>

#include "report/fixed_decimal.hpp"

namespace callmon::report {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not one.
size_t utf8_length(const std::string& s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

std::string json_quote(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else if (c >= 0x80) {
      size_t n = utf8_length(s, i);
      if (n == 0) {
        out += "\\ufffd";
        ++i;
        continue;
      }
      out.append(s, i, n);
      i += n;
      continue;
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string fixed3(double value) {
  std::string s;
  append_fixed3(s, value);
  return s;
}

void append_fixed3(std::string& out, double value) {
  const size_t at = out.size();
  append_fixed(out, value, 3);
  if (out.compare(at, std::string::npos, "-0.000") == 0) out.erase(at, 1);
}

char* write_fixed3(char* out, double value) {
  static_assert(kFixed3Room >= kFixedRoom);
  char* end = write_fixed(out, value, 3);
  if (end - out == 6 && std::memcmp(out, "-0.000", 6) == 0) {
    std::memmove(out, out + 1, 5);
    --end;
  }
  return end;
}

void append_uint(std::string& out, uint64_t value) {
  char text[24];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  out.append(text, end);
}

}  // namespace callmon::report
