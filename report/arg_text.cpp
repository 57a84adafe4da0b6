// Recorded values as text (arg_text.hpp).
#include "report/arg_text.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace callmon::report {
namespace {

using format::ArgFormat;
using format::StringState;

// Appends byte `c` as it appears inside a C literal delimited by `quote`.
void append_escaped(std::string& out, unsigned char c, char quote) {
  switch (c) {
    case '\a': out += "\\a"; return;
    case '\b': out += "\\b"; return;
    case '\f': out += "\\f"; return;
    case '\n': out += "\\n"; return;
    case '\r': out += "\\r"; return;
    case '\t': out += "\\t"; return;
    case '\v': out += "\\v"; return;
    case '\\': out += "\\\\"; return;
    default: break;
  }
  if (c == static_cast<unsigned char>(quote)) {
    out += '\\';
    out += quote;
  } else if (c >= 0x20 && c < 0x7f) {
    out += static_cast<char>(c);
  } else {
    out += fmt::format("\\x{:02x}", c);
  }
}

std::string string_literal(const format::ArgValue& v) {
  if (v.state == StringState::kNull) return "(null)";
  if (v.state == StringState::kUnreadable) return "(unreadable)";
  std::string out = "\"";
  for (char c : v.text) append_escaped(out, static_cast<unsigned char>(c), '"');
  out += '"';
  if (v.state == StringState::kTruncated) out += "...";
  return out;
}

// The value's bits within its format's width (the decoder guarantees it; a hand-made
// ArgValue may not).
uint64_t masked(const format::ArgValue& v) {
  const unsigned width = format::arg_int_width(v.format);
  return width >= 8 ? v.bits : v.bits & ((uint64_t{1} << (8 * width)) - 1);
}

}  // namespace

std::string format_arg_value(const format::ArgValue& v) {
  switch (v.format) {
    case ArgFormat::kI8: case ArgFormat::kI16: case ArgFormat::kI32: case ArgFormat::kI64: {
      const unsigned drop = 64 - 8 * format::arg_int_width(v.format);
      return fmt::format("{}", static_cast<int64_t>(v.bits << drop) >> drop);
    }
    case ArgFormat::kU8: case ArgFormat::kU16: case ArgFormat::kU32: case ArgFormat::kU64:
      return fmt::format("{}", masked(v));
    case ArgFormat::kX8: case ArgFormat::kX16: case ArgFormat::kX32: case ArgFormat::kX64:
      return fmt::format("0x{:x}", masked(v));
    case ArgFormat::kChar: {
      std::string out = "'";
      append_escaped(out, static_cast<unsigned char>(masked(v)), '\'');
      return out + "'";
    }
    case ArgFormat::kBool:
      return masked(v) != 0 ? "true" : "false";
    case ArgFormat::kPtr:
      return v.bits == 0 ? "nullptr" : fmt::format("0x{:x}", v.bits);
    case ArgFormat::kThis:
      return fmt::format("this=0x{:x}", v.bits);
    case ArgFormat::kF32:
      return fmt::format("{}", static_cast<float>(v.real));
    case ArgFormat::kF64:
      return fmt::format("{}", v.real);
    case ArgFormat::kCStr: case ArgFormat::kStdString:
      return string_literal(v);
    case ArgFormat::kNone:
      break;
  }
  return "?";
}

std::string format_arg_list(const std::vector<format::ArgValue>& values) {
  std::vector<const format::ArgValue*> order;
  order.reserve(values.size());
  for (const format::ArgValue& v : values) order.push_back(&v);
  std::stable_sort(order.begin(), order.end(),
                   [](const format::ArgValue* a, const format::ArgValue* b) {
                     return a->position < b->position;
                   });
  std::string out;
  for (const format::ArgValue* v : order) {
    if (!out.empty()) out += ", ";
    out += format_arg_value(*v);
  }
  return out;
}

std::string format_arg_payload(const uint8_t* data, size_t size) {
  auto values = format::decode_arg_values(data, size);
  if (!values) return "<bad values: " + values.error() + ">";
  return format_arg_list(*values);
}

std::string name_with_args(const std::string& name, const std::string& args) {
  const size_t close = name.rfind(')');
  if (close == std::string::npos) return name + "(" + args + ")";
  // Back to the '(' that matches the last ')'.
  size_t depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    if (name[i] == ')') {
      ++depth;
    } else if (name[i] == '(' && --depth == 0) {
      return name.substr(0, i + 1) + args + name.substr(close);
    }
  }
  return name + "(" + args + ")";  // unbalanced: leave the name alone
}

}  // namespace callmon::report
