// ARGS/RETVAL payloads (format/arg_values.hpp): the encoding of include/callmon/format/
// args.hpp byte by byte, encode/decode round trips of every format, and malformed payloads
// (each an error naming the value, never a crash or a read outside the payload).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "format/arg_values.hpp"

namespace callmon::format {
namespace {

ArgValue int_value(ArgFormat f, uint8_t pos, uint64_t bits) {
  ArgValue v;
  v.format = f;
  v.position = pos;
  v.bits = bits;
  return v;
}

ArgValue real_value(ArgFormat f, uint8_t pos, double real) {
  ArgValue v;
  v.format = f;
  v.position = pos;
  v.real = real;
  return v;
}

ArgValue string_value(ArgFormat f, uint8_t pos, std::string text, StringState st) {
  ArgValue v;
  v.format = f;
  v.position = pos;
  v.text = std::move(text);
  v.state = st;
  return v;
}

// Decodes `bytes` from a heap block of exactly their size, so that ASan catches any read
// past the payload.
Result<std::vector<ArgValue>> decode(const std::vector<uint8_t>& bytes) {
  std::unique_ptr<uint8_t[]> block(new uint8_t[bytes.size() + (bytes.empty() ? 1 : 0)]);
  if (!bytes.empty()) std::memcpy(block.get(), bytes.data(), bytes.size());
  return decode_arg_values(block.get(), bytes.size());
}

TEST(ArgValuesTest, EncodingIsTheDocumentedOne) {
  // i32 -5 at position 1: format 3, position 1, zigzag(-5) = 9.
  EXPECT_EQ(encode_arg_values({int_value(ArgFormat::kI32, 1, static_cast<uint64_t>(-5))}),
            (std::vector<uint8_t>{3, 1, 9}));
  // u16 300 at position 2: LEB128 300 = ac 02.
  EXPECT_EQ(encode_arg_values({int_value(ArgFormat::kU16, 2, 300)}),
            (std::vector<uint8_t>{6, 2, 0xac, 0x02}));
  // A return value (position 0), x8 0xff.
  EXPECT_EQ(encode_arg_values({int_value(ArgFormat::kX8, 0, 0xff)}),
            (std::vector<uint8_t>{9, 0, 0xff, 0x01}));
  // f32 1.0: IEEE 0x3f800000 little-endian.
  EXPECT_EQ(encode_arg_values({real_value(ArgFormat::kF32, 1, 1.0)}),
            (std::vector<uint8_t>{17, 1, 0x00, 0x00, 0x80, 0x3f}));
  // A C string "ab" (length 2 << 2 | kOk), a truncated one, a null one.
  EXPECT_EQ(encode_arg_values({string_value(ArgFormat::kCStr, 1, "ab", StringState::kOk)}),
            (std::vector<uint8_t>{19, 1, 8, 'a', 'b'}));
  EXPECT_EQ(encode_arg_values({string_value(ArgFormat::kStdString, 2, "x",
                                            StringState::kTruncated)}),
            (std::vector<uint8_t>{20, 2, 7, 'x'}));
  EXPECT_EQ(encode_arg_values({string_value(ArgFormat::kCStr, 3, "ignored",
                                            StringState::kNull)}),
            (std::vector<uint8_t>{19, 3, 1}));
}

TEST(ArgValuesTest, EveryFormatRoundTrips) {
  const std::vector<ArgValue> values = {
      int_value(ArgFormat::kI8, 1, static_cast<uint64_t>(-128)),
      int_value(ArgFormat::kI16, 2, 32767),
      int_value(ArgFormat::kI32, 3, static_cast<uint64_t>(INT32_MIN)),
      int_value(ArgFormat::kI64, 4, static_cast<uint64_t>(INT64_MIN)),
      int_value(ArgFormat::kU8, 5, 255),
      int_value(ArgFormat::kU16, 6, 65535),
      int_value(ArgFormat::kU32, 7, UINT32_MAX),
      int_value(ArgFormat::kU64, 8, UINT64_MAX),
      int_value(ArgFormat::kX8, 9, 0x7f),
      int_value(ArgFormat::kX16, 10, 0xbeef),
      int_value(ArgFormat::kX32, 11, 0xdeadbeef),
      int_value(ArgFormat::kX64, 12, 0x0123456789abcdefull),
      int_value(ArgFormat::kChar, 13, '\n'),
      int_value(ArgFormat::kBool, 14, 1),
      int_value(ArgFormat::kPtr, 15, 0x7ffc12345678ull),
      int_value(ArgFormat::kThis, 16, 0x55d0c0001000ull),
      real_value(ArgFormat::kF32, 17, 2.5),
      real_value(ArgFormat::kF64, 18, -1.5e-7),
      string_value(ArgFormat::kCStr, 19, std::string("a\0b", 3), StringState::kOk),
      string_value(ArgFormat::kStdString, 20, "cut", StringState::kTruncated),
      string_value(ArgFormat::kCStr, 21, "", StringState::kUnreadable),
      string_value(ArgFormat::kCStr, 22, "", StringState::kOk),
  };
  auto got = decode(encode_arg_values(values));
  ASSERT_TRUE(got) << got.error();
  ASSERT_EQ(got->size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    SCOPED_TRACE("value " + std::to_string(i));
    const ArgValue& a = values[i];
    const ArgValue& b = (*got)[i];
    EXPECT_EQ(b.format, a.format);
    EXPECT_EQ(b.position, a.position);
    EXPECT_EQ(b.state, a.state);
    EXPECT_EQ(b.text, a.text);
    if (arg_is_float(a.format)) {
      EXPECT_EQ(b.real, a.real);
    } else if (!arg_is_string(a.format)) {
      EXPECT_EQ(b.bits, a.bits);
    }
  }
  // Float bits are kept as stored.
  EXPECT_EQ((*got)[16].bits, 0x40200000u);
  uint64_t f64_bits;
  double d = -1.5e-7;
  std::memcpy(&f64_bits, &d, 8);
  EXPECT_EQ((*got)[17].bits, f64_bits);
}

TEST(ArgValuesTest, EncoderTruncatesToTheWidth) {
  // 0x1ff as u8 is 0xff; -1 given as 64 bits to i16 stays -1.
  auto got = decode(encode_arg_values({int_value(ArgFormat::kU8, 1, 0x1ff),
                                       int_value(ArgFormat::kI16, 2, UINT64_MAX)}));
  ASSERT_TRUE(got) << got.error();
  EXPECT_EQ((*got)[0].bits, 0xffu);
  EXPECT_EQ((*got)[1].bits, UINT64_MAX);
}

TEST(ArgValuesTest, WidthLimitsAreInclusive) {
  // zigzag 255 is -128 and 254 is 127: both fit i8; 0xffff fits u16.
  auto got = decode({1, 1, 0xff, 0x01, 1, 2, 0xfe, 0x01, 6, 3, 0xff, 0xff, 0x03});
  ASSERT_TRUE(got) << got.error();
  EXPECT_EQ((*got)[0].bits, static_cast<uint64_t>(-128));
  EXPECT_EQ((*got)[1].bits, 127u);
  EXPECT_EQ((*got)[2].bits, 0xffffu);
}

TEST(ArgValuesTest, EmptyPayloadHasNoValues) {
  auto got = decode({});
  ASSERT_TRUE(got) << got.error();
  EXPECT_TRUE(got->empty());
}

TEST(ArgValuesTest, SpecialFloatsDecode) {
  auto got = decode(encode_arg_values({real_value(ArgFormat::kF64, 1, INFINITY),
                                       real_value(ArgFormat::kF32, 2, NAN)}));
  ASSERT_TRUE(got) << got.error();
  EXPECT_TRUE(std::isinf((*got)[0].real));
  EXPECT_TRUE(std::isnan((*got)[1].real));
}

TEST(ArgValuesTest, MalformedPayloadsAreErrors) {
  struct Case {
    std::vector<uint8_t> bytes;
    const char* expect;
  };
  const Case cases[] = {
      {{0, 1, 0}, "value 1: unknown format 0"},
      {{21, 1, 0}, "value 1: unknown format 21"},
      {{3, 1, 2, 99, 1, 0}, "value 2: unknown format 99"},
      {{3}, "value 1: cut short"},                       // no position byte
      {{3, 1}, "value 1: cut short"},                    // no value
      {{3, 1, 0x80}, "value 1: cut short"},              // LEB128 continued past the end
      {{4, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
       "value 1: a LEB128 value longer than 10 bytes"},
      {{1, 1, 0x80, 0x02}, "value 1: 128 does not fit in 1 bytes"},   // i8 zigzag 256
      {{1, 1, 0x81, 0x02}, "value 1: -129 does not fit in 1 bytes"},   // i8 zigzag 257
      {{6, 1, 0x80, 0x80, 0x04}, "value 1: 65536 does not fit in 2 bytes"},  // u16
      {{14, 1, 0x80, 0x02}, "does not fit in 1 bytes"},  // bool 256
      {{18, 1, 0, 0, 0, 0, 0, 0, 0}, "value 1: cut short"},   // f64 with 7 bytes
      {{17, 1, 0, 0, 0}, "value 1: cut short"},              // f32 with 3 bytes
      {{19, 1, 4 << 2, 'a', 'b', 'c'}, "value 1: a string of 4 bytes, longer than the rest"},
      {{19, 1, 0x80}, "value 1: cut short"},                 // string length cut short
      {{19, 1, 1 << 2 | 1, 'a'}, "value 1: a null or unreadable string with 1 bytes"},
      {{20, 1, 2 << 2 | 2, 'a', 'b'}, "value 1: a null or unreadable string with 2 bytes"},
      {{19, 1, 0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
       "longer than the rest of the payload"},  // a huge length
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expect);
    auto got = decode(c.bytes);
    ASSERT_FALSE(got);
    EXPECT_NE(got.error().find(c.expect), std::string::npos) << got.error();
  }
}

TEST(ArgValuesTest, RandomBytesNeverCrash) {
  std::mt19937_64 rng(11);
  size_t ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes(rng() % 40);
    for (auto& b : bytes) {
      // Small bytes often, so that formats and short lengths are valid now and then.
      b = static_cast<uint8_t>(rng() % 3 == 0 ? rng() : rng() % 24);
    }
    auto got = decode(bytes);
    if (got) {
      ++ok;
      for (const ArgValue& v : *got) {
        EXPECT_NE(v.format, ArgFormat::kNone);
        EXPECT_LE(static_cast<unsigned>(v.format), static_cast<unsigned>(ArgFormat::kLast));
      }
    }
  }
  EXPECT_GT(ok, 100u);
}

}  // namespace
}  // namespace callmon::format
