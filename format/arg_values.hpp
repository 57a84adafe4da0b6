// The values of an ARGS or RETVAL record (Event::kArgs / Event::kRetval): decoding the
// payload whose encoding include/callmon/format/args.hpp fixes, and encoding one (for the
// trace writer of the tests; the runtime has its own writer). The decoder validates
// everything and never reads outside the payload: a recording is untrusted input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "callmon/format/args.hpp"
#include "format/result.hpp"

namespace callmon::format {

// One recorded value.
struct ArgValue {
  ArgFormat format = ArgFormat::kNone;
  uint8_t position = 0;  // parameter number from 1; 0 for a return value
  // Integer formats (i*, u*, x*, char, bool, ptr, this): the value; a signed format's value
  // is sign-extended to 64 bits (two's complement), the others are zero-extended.
  // f32/f64: the IEEE bits as stored (f32 in the low 32 bits). Strings: 0.
  uint64_t bits = 0;
  double real = 0;  // f32/f64: the value (an f32 converted exactly); else 0
  std::string text;  // strings: the bytes recorded (none for kNull and kUnreadable)
  StringState state = StringState::kOk;  // strings only
};

// Decodes a payload of `size` bytes at `data` into its values, in payload order.
// An empty payload gives no values. Errors (one sentence naming the value, counted from 1,
// and the problem): an unknown format, a value cut short by the end of the payload, a LEB128
// value longer than 10 bytes, an integer outside its format's width, a string longer than
// the rest of the payload, a null or unreadable string with a non-zero length.
Result<std::vector<ArgValue>> decode_arg_values(const uint8_t* data, size_t size);

// Encodes `values` as a payload (the inverse of decode_arg_values for valid values).
// Integers are taken from `bits` (truncated to the format's width, then sign- or
// zero-extended), floats from `real`, strings from `text` and `state` (no bytes for kNull and
// kUnreadable). Values with format kNone or an unknown format are skipped.
std::vector<uint8_t> encode_arg_values(const std::vector<ArgValue>& values);

}  // namespace callmon::format
