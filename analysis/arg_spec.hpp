// Argument and return-value specifications of `callmon record -A/-R` (docs/record.md,
// "Arguments and return values"): parsing the user's text, merging the rules that match one
// function, and placing each argument where the System V x86-64 ABI passes it, for the
// runtime (select::SpecEntry in include/callmon/select_protocol.hpp).
//
//   -A 'PATTERN@ITEM[,ITEM...]'   ITEM: argN[/FMT] or this
//   -R 'PATTERN[@retval[/FMT]]'
// PATTERN is an ECMAScript regex searched in demangled names (as --include). N counts the
// parameters as the ABI passes them: for a member function arg1 is the object pointer
// (`this` is a name for arg1/this). FMT: i8 i16 i32 i64 u8 u16 u32 u64 x8 x16 x32 x64 c b
// p s S f32 f64 (default i64): format::kArgFormatNames.
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "callmon/format/args.hpp"
#include "callmon/select_protocol.hpp"
#include "format/result.hpp"

namespace callmon::analysis {

struct ArgItem {
  format::ArgFormat format = format::ArgFormat::kI64;
  uint8_t position = 0;  // parameter number from 1
};

// What is recorded for one function: arguments sorted by position, the return value's
// format (kNone: none). `hidden_return` is set when the function returns its value through
// a hidden pointer in the first integer register (a class returned in memory): the
// arguments then start at the second register and the value recorded at return is the
// object rax points to.
struct FunctionArgs {
  std::vector<ArgItem> args;
  format::ArgFormat ret = format::ArgFormat::kNone;
  bool hidden_return = false;

  bool empty() const { return args.empty() && ret == format::ArgFormat::kNone; }
  // Adds `other`'s items; an argument at a position already present takes other's format.
  void merge(const FunctionArgs& other);
};

// One -A or -R option.
struct ArgRule {
  std::string text;  // as given, for messages
  std::regex pattern;
  FunctionArgs what;
};

// Parses `text` as an -A rule (`retval` false) or an -R rule (`retval` true). Errors name
// the problem and the offending item: a missing '@', a bad regex, an unknown format, a
// position outside 1..32, more than kMaxArgs arguments, a float format for `this`.
Result<ArgRule> parse_arg_rule(std::string_view text, bool retval);

// What the rules whose pattern matches the demangled `name` record, merged in order.
FunctionArgs args_for_name(const std::vector<ArgRule>& rules, const std::string& name);

// Places `what` for the function at [lo, hi): integer-class arguments (every format but
// f32/f64) in rdi rsi rdx rcx r8 r9, floats in xmm0..7, the rest on the stack in position
// order. A position not listed counts as an integer-class argument before the listed ones.
select::SpecEntry place_args(const FunctionArgs& what, uint64_t lo, uint64_t hi);

}  // namespace callmon::analysis
