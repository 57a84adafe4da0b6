// Parsing and placement of argument/return-value specs (arg_spec.hpp).
#include "analysis/arg_spec.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "analysis/cxx_names.hpp"

namespace callmon::analysis {

using format::ArgFormat;
using format::arg_format_from_name;

namespace {

constexpr unsigned kMaxPosition = 32;
constexpr unsigned kIntArgRegCount = 6;
constexpr unsigned kXmmArgRegCount = 8;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "argN[/FMT]" or "this".
Result<ArgItem> parse_arg_item(std::string_view item) {
  if (item == "this") return ArgItem{ArgFormat::kThis, 1};
  std::string_view name = item, fmt_name;
  if (size_t slash = item.find('/'); slash != std::string_view::npos) {
    name = item.substr(0, slash);
    fmt_name = item.substr(slash + 1);
  }
  unsigned pos = 0;
  if (name.substr(0, 3) != "arg" ||
      std::from_chars(name.data() + 3, name.data() + name.size(), pos).ec != std::errc{} ||
      std::from_chars(name.data() + 3, name.data() + name.size(), pos).ptr !=
          name.data() + name.size())
    return Error{fmt::format("'{}': expected argN[/FORMAT] or this", item)};
  if (pos < 1 || pos > kMaxPosition)
    return Error{fmt::format("'{}': argument numbers go from 1 to {}", item, kMaxPosition)};
  ArgItem a{ArgFormat::kI64, static_cast<uint8_t>(pos)};
  if (!fmt_name.empty()) {
    a.format = arg_format_from_name(fmt_name);
    if (a.format == ArgFormat::kNone)
      return Error{fmt::format("'{}': unknown format '{}' (i8..i64 u8..u64 x8..x64 c b p s S "
                               "f32 f64 this)", item, fmt_name)};
    if (a.format == ArgFormat::kThis && pos != 1)
      return Error{fmt::format("'{}': the object pointer is always arg1", item)};
  }
  return a;
}

Result<format::ArgFormat> parse_retval_item(std::string_view item) {
  std::string_view fmt_name;
  if (size_t slash = item.find('/'); slash != std::string_view::npos) {
    fmt_name = item.substr(slash + 1);
    item = item.substr(0, slash);
  }
  if (item != "retval") return Error{fmt::format("'{}': expected retval[/FORMAT]", item)};
  if (fmt_name.empty()) return ArgFormat::kI64;
  ArgFormat f = arg_format_from_name(fmt_name);
  if (f == ArgFormat::kNone || f == ArgFormat::kThis)
    return Error{fmt::format("'retval/{}': unknown format (i8..i64 u8..u64 x8..x64 c b p s S "
                             "f32 f64)", fmt_name)};
  return f;
}

}  // namespace

void FunctionArgs::merge(const FunctionArgs& other) {
  for (const ArgItem& a : other.args) {
    auto it = std::find_if(args.begin(), args.end(),
                           [&](const ArgItem& b) { return b.position == a.position; });
    if (it != args.end()) it->format = a.format;
    else args.push_back(a);
  }
  std::sort(args.begin(), args.end(),
            [](const ArgItem& x, const ArgItem& y) { return x.position < y.position; });
  if (args.size() > format::kMaxArgs) args.resize(format::kMaxArgs);
  if (other.ret != ArgFormat::kNone) ret = other.ret;
  hidden_return = hidden_return || other.hidden_return;
}

Result<ArgRule> parse_arg_rule(std::string_view text, bool retval) {
  const char* option = retval ? "-R" : "-A";
  size_t at = text.rfind('@');
  if (!retval && at == std::string_view::npos)
    return Error{fmt::format("{} '{}': expected PATTERN@ITEM[,ITEM...]", option, text)};
  std::string_view pattern = at == std::string_view::npos ? text : text.substr(0, at);
  if (pattern.empty()) return Error{fmt::format("{} '{}': empty pattern", option, text)};
  ArgRule rule;
  rule.text = std::string(text);
  try {
    rule.pattern = std::regex(std::string(pattern), std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return Error{fmt::format("{} '{}': bad regular expression: {}", option, text, e.what())};
  }
  if (retval) {
    auto f = parse_retval_item(at == std::string_view::npos ? "retval" : trim(text.substr(at + 1)));
    if (!f) return Error{fmt::format("{} '{}': {}", option, text, f.error())};
    rule.what.ret = *f;
    return rule;
  }
  std::string_view items = text.substr(at + 1);
  if (trim(items).empty()) return Error{fmt::format("{} '{}': no arguments named", option, text)};
  while (true) {
    size_t comma = items.find(',');
    auto item = parse_arg_item(trim(items.substr(0, comma)));
    if (!item) return Error{fmt::format("{} '{}': {}", option, text, item.error())};
    FunctionArgs one;
    one.args.push_back(*item);
    rule.what.merge(one);
    if (comma == std::string_view::npos) break;
    items.remove_prefix(comma + 1);
  }
  if (rule.what.args.size() == format::kMaxArgs && text.size() > 0) {
    // merge() caps silently; a rule of its own is told.
    size_t count = static_cast<size_t>(std::count(text.begin() + at, text.end(), ',')) + 1;
    if (count > format::kMaxArgs)
      return Error{fmt::format("{} '{}': at most {} arguments per function", option, text,
                               format::kMaxArgs)};
  }
  return rule;
}

FunctionArgs args_for_name(const std::vector<ArgRule>& rules, const std::string& name) {
  FunctionArgs out;
  const std::string matched = without_return_type(name);  // as --include matches
  for (const ArgRule& r : rules)
    if (std::regex_search(matched, r.pattern)) out.merge(r.what);
  return out;
}

select::SpecEntry place_args(const FunctionArgs& what, uint64_t lo, uint64_t hi) {
  select::SpecEntry e{};
  e.lo = lo;
  e.hi = hi;
  e.ret_format = static_cast<uint8_t>(what.ret);
  unsigned next_int = what.hidden_return ? 1 : 0, next_xmm = 0, next_stack = 0;
  unsigned position = 1;  // the next parameter not placed yet
  for (const ArgItem& a : what.args) {
    if (e.nargs == format::kMaxArgs) break;
    // Unlisted parameters before this one: integer class.
    for (; position < a.position; ++position) {
      if (next_int < kIntArgRegCount) ++next_int;
      else ++next_stack;
    }
    select::ArgSlot s{static_cast<uint8_t>(a.format), a.position, select::kInReg, 0};
    if (format::arg_is_float(a.format)) {
      if (next_xmm < kXmmArgRegCount) {
        s.where = select::kInXmm;
        s.index = static_cast<uint8_t>(next_xmm++);
      } else {
        s.where = select::kOnStack;
        s.index = static_cast<uint8_t>(next_stack++);
      }
    } else if (next_int < kIntArgRegCount) {
      s.index = static_cast<uint8_t>(next_int++);
    } else {
      s.where = select::kOnStack;
      s.index = static_cast<uint8_t>(next_stack++);
    }
    position = a.position + 1u;
    e.args[e.nargs++] = s;
  }
  return e;
}

}  // namespace callmon::analysis
