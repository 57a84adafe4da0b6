// Unit tests of analysis/arg_spec (the -A/-R rule syntax and where each argument is found)
// and analysis/arg_selection (one spec per function of an ELF file; this test's own
// executable).
#include "analysis/arg_spec.hpp"

#include <gtest/gtest.h>

#include "analysis/arg_selection.hpp"
#include "analysis/symbolizer.hpp"

extern "C" __attribute__((noinline, used)) int argspec_target(int a, double b) {
  return a + static_cast<int>(b);
}

namespace {

using callmon::analysis::ArgItem;
using callmon::analysis::FunctionArgs;
using callmon::analysis::parse_arg_rule;
using callmon::analysis::place_args;
using callmon::format::ArgFormat;
namespace select = callmon::select;

TEST(ArgSpec, ParsesItemsAndDefaults) {
  auto r = parse_arg_rule("^ns::f$@arg2/s, arg1/x32,this", false);
  ASSERT_TRUE(r) << r.error();
  // `this` is arg1 and, given after arg1/x32, takes its place.
  ASSERT_EQ(r->what.args.size(), 2u);
  EXPECT_EQ(r->what.args[0].position, 1);
  EXPECT_EQ(r->what.args[0].format, ArgFormat::kThis);
  EXPECT_EQ(r->what.args[1].position, 2);
  EXPECT_EQ(r->what.args[1].format, ArgFormat::kCStr);
  EXPECT_EQ(r->what.ret, ArgFormat::kNone);
  EXPECT_TRUE(std::regex_search(std::string("ns::f"), r->pattern));

  auto d = parse_arg_rule("g@arg3", false);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->what.args[0].format, ArgFormat::kI64);

  auto ret = parse_arg_rule("h", true);
  ASSERT_TRUE(ret);
  EXPECT_EQ(ret->what.ret, ArgFormat::kI64);
  EXPECT_TRUE(ret->what.args.empty());
  auto ret2 = parse_arg_rule("h@retval/f64", true);
  ASSERT_TRUE(ret2);
  EXPECT_EQ(ret2->what.ret, ArgFormat::kF64);
}

TEST(ArgSpec, RejectsBadRules) {
  for (const char* bad : {"noat", "@arg1", "f@", "f@arg0", "f@arg33", "f@x1", "f@arg1/q",
                          "f@arg2/this", "(@arg1", "f@arg1,", "f@arg1/s/s"}) {
    auto r = parse_arg_rule(bad, false);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_NE(r.error().find(bad), std::string::npos) << r.error();
    }
  }
  EXPECT_FALSE(parse_arg_rule("f@arg1,arg2,arg3,arg4,arg5,arg6,arg7,arg8,arg9,arg10,arg11,arg12,"
                              "arg13", false));
  EXPECT_FALSE(parse_arg_rule("f@retval/this", true));
  EXPECT_FALSE(parse_arg_rule("f@result", true));
  EXPECT_FALSE(parse_arg_rule("f@retval/zz", true));
}

TEST(ArgSpec, EveryFormatNameRoundTrips) {
  for (int f = 1; f <= static_cast<int>(ArgFormat::kLast); ++f) {
    auto fmt = static_cast<ArgFormat>(f);
    EXPECT_EQ(callmon::format::arg_format_from_name(callmon::format::arg_format_name(fmt)),
              fmt);
  }
  EXPECT_EQ(callmon::format::arg_format_from_name("nope"), ArgFormat::kNone);
}

TEST(ArgSpec, PlacesIntegersFloatsAndStackArguments) {
  FunctionArgs w;
  // f(int, double, long, float, x, x, x, x, long, double) with arg 5..8 unlisted.
  w.args = {{ArgFormat::kI32, 1}, {ArgFormat::kF64, 2}, {ArgFormat::kI64, 3},
            {ArgFormat::kF32, 4}, {ArgFormat::kI64, 9}, {ArgFormat::kF64, 10}};
  w.ret = ArgFormat::kF64;
  select::SpecEntry e = place_args(w, 0x1000, 0x1040);
  EXPECT_EQ(e.lo, 0x1000u);
  EXPECT_EQ(e.hi, 0x1040u);
  EXPECT_EQ(e.ret_format, static_cast<uint8_t>(ArgFormat::kF64));
  ASSERT_EQ(e.nargs, 6);
  auto at = [&](int i) { return std::pair<int, int>(e.args[i].where, e.args[i].index); };
  EXPECT_EQ(at(0), std::make_pair(int{select::kInReg}, 0));  // rdi
  EXPECT_EQ(at(1), std::make_pair(int{select::kInXmm}, 0));
  EXPECT_EQ(at(2), std::make_pair(int{select::kInReg}, 1));  // rsi
  EXPECT_EQ(at(3), std::make_pair(int{select::kInXmm}, 1));
  // Unlisted 5..8 take rdx rcx r8 r9; 9 is the first stack slot. 10 is a float: xmm2.
  EXPECT_EQ(at(4), std::make_pair(int{select::kOnStack}, 0));
  EXPECT_EQ(at(5), std::make_pair(int{select::kInXmm}, 2));
  EXPECT_EQ(e.args[4].position, 9);
}

TEST(ArgSpec, HiddenReturnPointerShiftsIntegers) {
  FunctionArgs w;
  w.args = {{ArgFormat::kCStr, 1}};
  w.ret = ArgFormat::kStdString;
  w.hidden_return = true;
  select::SpecEntry e = place_args(w, 0, 1);
  ASSERT_EQ(e.nargs, 1);
  EXPECT_EQ(e.args[0].where, select::kInReg);
  EXPECT_EQ(e.args[0].index, 1);  // rsi: rdi holds where the result goes
}

TEST(ArgSpec, NinthFloatGoesToTheStack) {
  FunctionArgs w;
  for (uint8_t p = 1; p <= 9; ++p) w.args.push_back({ArgFormat::kF64, p});
  select::SpecEntry e = place_args(w, 0, 1);
  ASSERT_EQ(e.nargs, 9);
  EXPECT_EQ(e.args[7].where, select::kInXmm);
  EXPECT_EQ(e.args[7].index, 7);
  EXPECT_EQ(e.args[8].where, select::kOnStack);
  EXPECT_EQ(e.args[8].index, 0);
}

TEST(ArgSpec, MergeLetsLaterRulesWin) {
  std::vector<callmon::analysis::ArgRule> rules;
  for (auto [text, ret] : {std::pair{"target@arg1/i32,arg2/f64", false},
                           std::pair{"argspec_@arg1/x32", false},
                           std::pair{"nomatch@arg3", false}, std::pair{"target", true}}) {
    auto r = parse_arg_rule(text, ret);
    ASSERT_TRUE(r) << r.error();
    rules.push_back(std::move(r).value());
  }
  FunctionArgs w = callmon::analysis::args_for_name(rules, "argspec_target");
  ASSERT_EQ(w.args.size(), 2u);
  EXPECT_EQ(w.args[0].format, ArgFormat::kX32);
  EXPECT_EQ(w.args[1].format, ArgFormat::kF64);
  EXPECT_EQ(w.ret, ArgFormat::kI64);
  EXPECT_TRUE(callmon::analysis::args_for_name(rules, "other").empty());
}

TEST(ArgSelection, OneEntryForTheMatchingFunction) {
  auto image = callmon::analysis::ElfImage::open("/proc/self/exe");
  ASSERT_TRUE(image) << image.error();
  auto rule = parse_arg_rule("^argspec_target$@arg1/i32,arg2/f64", false);
  ASSERT_TRUE(rule);
  std::vector<callmon::analysis::ArgRule> rules;
  rules.push_back(std::move(rule).value());
  auto entries = callmon::analysis::spec_entries(**image, rules, {});
  ASSERT_EQ(entries.size(), 1u);
  const callmon::analysis::FuncSymbol* fn = (*image)->find_function(entries[0].lo);
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn->name, "argspec_target");
  EXPECT_EQ(entries[0].lo, fn->start);
  EXPECT_EQ(entries[0].hi, fn->start + fn->size);
  EXPECT_EQ(entries[0].nargs, 2);
  EXPECT_EQ(entries[0].args[1].where, select::kInXmm);

  // DWARF-derived specs are kept where no rule matches, and a rule's items override theirs.
  callmon::analysis::AutoArgs dwarf{fn->start, fn->start + fn->size, {}};
  dwarf.what.args = {{ArgFormat::kU8, 1}, {ArgFormat::kF32, 2}, {ArgFormat::kI64, 3}};
  dwarf.what.ret = ArgFormat::kI32;
  auto merged = callmon::analysis::spec_entries(**image, rules, {dwarf});
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].nargs, 3);
  EXPECT_EQ(merged[0].args[0].format, static_cast<uint8_t>(ArgFormat::kI32));
  EXPECT_EQ(merged[0].args[1].format, static_cast<uint8_t>(ArgFormat::kF64));
  EXPECT_EQ(merged[0].args[2].format, static_cast<uint8_t>(ArgFormat::kI64));
  EXPECT_EQ(merged[0].ret_format, static_cast<uint8_t>(ArgFormat::kI32));
  EXPECT_TRUE(callmon::analysis::spec_entries(**image, {}, {}).empty());
}

}  // namespace
