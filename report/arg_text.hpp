// Recorded argument and return values as text (docs/replay.md, "Arguments and return
// values"): one value as C would write it, a payload as a list, and a function name with
// its argument list filled in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "format/arg_values.hpp"

namespace callmon::report {

// One value:
//   i8..i64 / u8..u64   decimal: -5, 42
//   x8..x64             0x2a (lower case, no leading zeros)
//   char                a C character literal: 'a', '\n', '\'', '\x01', '\xe9'
//   bool                true / false (any non-zero value is true)
//   pointer             0x7ffd1234; a null pointer as nullptr
//   this                this=0x55d0c0001000
//   f32 / f64           the shortest text that reads back as the same float/double:
//                       0.1, 3, -2.5e-07, 1e+100, inf, -inf, nan
//   strings             a C string literal: "a\tb\"c"; bytes outside printable ASCII as
//                       \xHH (always two digits); a truncated string is followed by ...;
//                       a null one is (null), an unreadable one (unreadable)
std::string format_arg_value(const format::ArgValue& v);

// The values in position order (stable for equal positions), separated by ", ".
std::string format_arg_list(const std::vector<format::ArgValue>& values);

// Decodes a payload (format::decode_arg_values) and formats its values as
// format_arg_list; a malformed payload gives "<bad values: WHY>".
std::string format_arg_payload(const uint8_t* data, size_t size);

// `name` with `args` as its argument list: the text between the parentheses of the last
// parameter list of a demangled name is replaced ("ns::f(int) const" -> "ns::f(1) const"),
// "f()" becomes "f(1)", and a name without parentheses gets "(args)" appended.
std::string name_with_args(const std::string& name, const std::string& args);

}  // namespace callmon::report
