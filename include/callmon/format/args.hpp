// Argument and return-value records (callmon record -A/-R/--auto-args, docs/format.md
// "ARGS and RETVAL"). STABLE FORMAT, shared by the runtime (writer) and the format library
// (reader).
//
// An ARGS record (SPECIAL code kCodeArgs) follows the ENTER of the call whose arguments it
// holds; a RETVAL record (kCodeRetval) follows the EXIT of the call that returned the value.
// Both attach to that call even when a signal's nested records come between: a nested ARGS
// record belongs to the nested ENTER just before it. Fields: LEB128 payload length, then the
// payload: a sequence of values, each
//     format (1 byte, ArgFormat), position (1 byte: parameter number from 1, 0 for the
//     return value), then the value's encoding:
//   signed integers          zigzag LEB128 (sign-extended from the format's width)
//   unsigned, hex, char,
//   bool, pointer, this      LEB128 (zero-extended from the format's width)
//   f32 / f64                4 / 8 bytes, IEEE little-endian
//   C string, std::string    LEB128 (length << 2 | StringState), then `length` bytes
#pragma once

#include <cstdint>
#include <iterator>
#include <string_view>

namespace callmon::format {

enum class ArgFormat : uint8_t {
  kNone = 0,
  kI8 = 1, kI16 = 2, kI32 = 3, kI64 = 4,    // signed decimal
  kU8 = 5, kU16 = 6, kU32 = 7, kU64 = 8,    // unsigned decimal
  kX8 = 9, kX16 = 10, kX32 = 11, kX64 = 12, // hexadecimal
  kChar = 13,       // one character ('a', '\n', '\x01')
  kBool = 14,       // true/false (the low byte)
  kPtr = 15,        // pointer, shown in hex (0x0 as nullptr)
  kThis = 16,       // the object pointer of a member function, shown as this=0x...
  kF32 = 17,        // float (the low 4 bytes of an xmm register or stack slot)
  kF64 = 18,        // double
  kCStr = 19,       // const char*: the characters it points to
  kStdString = 20,  // const std::string& (or by value, passed by reference): its characters
  kLast = kStdString,
};

// The low two bits of a string's length field.
enum class StringState : uint8_t {
  kOk = 0,          // `length` bytes, the whole string
  kNull = 1,        // the pointer was null; no bytes
  kUnreadable = 2,  // the memory could not be read; no bytes
  kTruncated = 3,   // the first `length` bytes of a longer string
};

// Bytes of a string the runtime stores at most; longer strings are kTruncated.
inline constexpr unsigned kMaxStringBytes = 80;
// Values one ARGS record holds at most.
inline constexpr unsigned kMaxArgs = 12;

// The formats' names as -A/-R spell them (docs/record.md), indexed by ArgFormat.
inline constexpr const char* kArgFormatNames[] = {
    "none", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "x8", "x16",
    "x32",  "x64", "c",  "b",   "p",   "this", "f32", "f64", "s",  "S"};
static_assert(std::size(kArgFormatNames) == static_cast<size_t>(ArgFormat::kLast) + 1);

inline const char* arg_format_name(ArgFormat f) {
  auto i = static_cast<size_t>(f);
  return i < std::size(kArgFormatNames) ? kArgFormatNames[i] : "?";
}

// The format named `name`; kNone when there is none.
inline ArgFormat arg_format_from_name(std::string_view name) {
  for (size_t i = 1; i < std::size(kArgFormatNames); ++i)
    if (name == kArgFormatNames[i]) return static_cast<ArgFormat>(i);
  return ArgFormat::kNone;
}

// Width in bytes of an integer format (1, 2, 4 or 8); 8 for pointers; 0 for the rest.
inline constexpr unsigned arg_int_width(ArgFormat f) {
  switch (f) {
    case ArgFormat::kI8: case ArgFormat::kU8: case ArgFormat::kX8: case ArgFormat::kChar:
    case ArgFormat::kBool: return 1;
    case ArgFormat::kI16: case ArgFormat::kU16: case ArgFormat::kX16: return 2;
    case ArgFormat::kI32: case ArgFormat::kU32: case ArgFormat::kX32: return 4;
    case ArgFormat::kI64: case ArgFormat::kU64: case ArgFormat::kX64: case ArgFormat::kPtr:
    case ArgFormat::kThis: return 8;
    default: return 0;
  }
}

inline constexpr bool arg_is_signed(ArgFormat f) {
  return f == ArgFormat::kI8 || f == ArgFormat::kI16 || f == ArgFormat::kI32 ||
         f == ArgFormat::kI64;
}
inline constexpr bool arg_is_float(ArgFormat f) {
  return f == ArgFormat::kF32 || f == ArgFormat::kF64;
}
inline constexpr bool arg_is_string(ArgFormat f) {
  return f == ArgFormat::kCStr || f == ArgFormat::kStdString;
}

}  // namespace callmon::format
