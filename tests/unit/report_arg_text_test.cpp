// Recorded values as text (report/arg_text.hpp): every format, C escapes in chars and
// strings, string states, position order, malformed payloads, and names with their
// argument list filled in.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "report/arg_text.hpp"

namespace callmon::report {
namespace {

using format::ArgFormat;
using format::ArgValue;
using format::StringState;

ArgValue iv(ArgFormat f, uint64_t bits, uint8_t pos = 1) {
  ArgValue v;
  v.format = f;
  v.bits = bits;
  v.position = pos;
  return v;
}

ArgValue fv(ArgFormat f, double real) {
  ArgValue v;
  v.format = f;
  v.real = real;
  return v;
}

ArgValue sv(std::string text, StringState st = StringState::kOk,
            ArgFormat f = ArgFormat::kCStr) {
  ArgValue v;
  v.format = f;
  v.text = std::move(text);
  v.state = st;
  return v;
}

TEST(ArgTextTest, Integers) {
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kI32, static_cast<uint64_t>(-7))), "-7");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kI8, static_cast<uint64_t>(-128))), "-128");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kI64, static_cast<uint64_t>(INT64_MIN))),
            "-9223372036854775808");
  // Sign taken from the format's width even if the bits were not sign-extended.
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kI16, 0xffff)), "-1");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kU8, 255)), "255");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kU64, UINT64_MAX)), "18446744073709551615");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kX16, 0xbeef)), "0xbeef");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kX8, 0)), "0x0");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kX64, 0xdeadbeefcafef00dull)), "0xdeadbeefcafef00d");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kBool, 0)), "false");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kBool, 1)), "true");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kBool, 2)), "true");
}

TEST(ArgTextTest, Pointers) {
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kPtr, 0)), "nullptr");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kPtr, 0x7ffc0010)), "0x7ffc0010");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kThis, 0x55d0c0001000)), "this=0x55d0c0001000");
}

TEST(ArgTextTest, Chars) {
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kChar, 'a')), "'a'");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kChar, '\n')), "'\\n'");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kChar, '\'')), "'\\''");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kChar, '"')), "'\"'");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kChar, '\\')), "'\\\\'");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kChar, 0)), "'\\x00'");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kChar, 1)), "'\\x01'");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kChar, 0xe9)), "'\\xe9'");
  EXPECT_EQ(format_arg_value(iv(ArgFormat::kChar, 0x7f)), "'\\x7f'");
}

TEST(ArgTextTest, FloatsAreShortestRoundTrip) {
  EXPECT_EQ(format_arg_value(fv(ArgFormat::kF64, 0.1)), "0.1");
  EXPECT_EQ(format_arg_value(fv(ArgFormat::kF64, 3.0)), "3");
  EXPECT_EQ(format_arg_value(fv(ArgFormat::kF64, -1.5e-7)), "-1.5e-07");
  EXPECT_EQ(format_arg_value(fv(ArgFormat::kF64, 1e100)), "1e+100");
  EXPECT_EQ(format_arg_value(fv(ArgFormat::kF64, 1.0 / 3)), "0.3333333333333333");
  // An f32 shows the float's own shortest form, not the double's.
  EXPECT_EQ(format_arg_value(fv(ArgFormat::kF32, static_cast<double>(0.1f))), "0.1");
  EXPECT_EQ(format_arg_value(fv(ArgFormat::kF32, 2.5)), "2.5");
  EXPECT_EQ(format_arg_value(fv(ArgFormat::kF64, INFINITY)), "inf");
  EXPECT_EQ(format_arg_value(fv(ArgFormat::kF64, -INFINITY)), "-inf");
  EXPECT_EQ(format_arg_value(fv(ArgFormat::kF64, NAN)), "nan");
}

TEST(ArgTextTest, Strings) {
  EXPECT_EQ(format_arg_value(sv("hello")), "\"hello\"");
  EXPECT_EQ(format_arg_value(sv("a\tb\"c\\d\n")), "\"a\\tb\\\"c\\\\d\\n\"");
  EXPECT_EQ(format_arg_value(sv("it's")), "\"it's\"");
  EXPECT_EQ(format_arg_value(sv(std::string("\0\x01\xff", 3))), "\"\\x00\\x01\\xff\"");
  EXPECT_EQ(format_arg_value(sv("")), "\"\"");
  EXPECT_EQ(format_arg_value(sv("abc", StringState::kTruncated)), "\"abc\"...");
  EXPECT_EQ(format_arg_value(sv("", StringState::kNull)), "(null)");
  EXPECT_EQ(format_arg_value(sv("", StringState::kUnreadable)), "(unreadable)");
  EXPECT_EQ(format_arg_value(sv("s", StringState::kOk, ArgFormat::kStdString)), "\"s\"");
}

TEST(ArgTextTest, ListIsInPositionOrder) {
  EXPECT_EQ(format_arg_list({}), "");
  EXPECT_EQ(format_arg_list({iv(ArgFormat::kI32, 3, 3), iv(ArgFormat::kI32, 1, 1),
                             iv(ArgFormat::kI32, 2, 2)}),
            "1, 2, 3");
}

TEST(ArgTextTest, PayloadDecodesOrNamesTheProblem) {
  const std::vector<uint8_t> good = {3, 2, 9, 19, 1, 8, 'h', 'i'};  // i32 -5 at 2, "hi" at 1
  EXPECT_EQ(format_arg_payload(good.data(), good.size()), "\"hi\", -5");
  const std::vector<uint8_t> bad = {99, 1, 0};
  EXPECT_EQ(format_arg_payload(bad.data(), bad.size()),
            "<bad values: value 1: unknown format 99>");
  EXPECT_EQ(format_arg_payload(nullptr, 0), "");
}

TEST(ArgTextTest, NameWithArgs) {
  EXPECT_EQ(name_with_args("fib()", "10"), "fib(10)");
  EXPECT_EQ(name_with_args("fib", "10"), "fib(10)");
  EXPECT_EQ(name_with_args("ns::A::f(int, char const*) const", "1, \"x\""),
            "ns::A::f(1, \"x\") const");
  EXPECT_EQ(name_with_args("Foo::operator()(int)", "3"), "Foo::operator()(3)");
  EXPECT_EQ(name_with_args("(anonymous namespace)::g(std::pair<int, int>)", "7"),
            "(anonymous namespace)::g(7)");
  EXPECT_EQ(name_with_args("h(void (*)(int))", "0x401000"), "h(0x401000)");
  EXPECT_EQ(name_with_args("k(int) [clone .cold]", "1"), "k(1) [clone .cold]");
  EXPECT_EQ(name_with_args("f()", ""), "f()");
  // An unbalanced name is left alone, the values appended.
  EXPECT_EQ(name_with_args("odd)", "1"), "odd)(1)");
}

}  // namespace
}  // namespace callmon::report
