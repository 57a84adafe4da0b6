// Filter options of the reading subcommands (filter_options.hpp).
#include "tools/callmon/filter_options.hpp"

#include "tools/callmon/command.hpp"

namespace callmon::tools {

CLI::Validator duration_ns() {
  return CLI::Validator(
      [](std::string& text) {
        auto ns = analysis::parse_duration(text);
        if (!ns) return ns.error();
        text = std::to_string(*ns);
        return std::string();
      },
      "");  // no description: the option's type name says DURATION
}

void add_filter_options(CLI::App* sub, FilterOptions& o, FilterOptionSet which) {
  sub->add_option("--include", o.include,
                  "keep only calls whose demangled name matches REGEX (others' time goes to "
                  "their parent's self, their children stay)")
      ->type_name("REGEX");
  sub->add_option("--exclude", o.exclude, "drop calls whose demangled name matches REGEX")
      ->type_name("REGEX");
  sub->add_option("--focus", o.focus,
                  "keep only calls whose demangled name matches REGEX, with everything they "
                  "call (uftrace -F)")
      ->type_name("REGEX");
  sub->add_option("--callee-of", o.callee_of,
                  "keep only what calls matching REGEX call, directly or not (not the "
                  "matching calls themselves)")
      ->type_name("REGEX");
  sub->add_option("--hide", o.hide,
                  "drop calls matching REGEX with everything they call (uftrace -N)")
      ->type_name("REGEX");
  sub->add_option("--caller-of", o.caller_of,
                  "keep only calls matching REGEX and the chain of their callers (uftrace -C)")
      ->type_name("REGEX");
  sub->add_option("--min-duration", o.min_duration_ns,
                  "drop calls shorter than DURATION (measured; ns, or with a unit: 250us, "
                  "1.5ms); their time stays in the parent")
      ->transform(duration_ns())
      ->type_name("DURATION");
  sub->add_option("--time-range", o.time_range,
                  "keep calls overlapping START..END, from the recording's start, in ns or "
                  "with a unit: 10ms..1.5s (START:END too; either side may be empty)")
      ->type_name("START..END");
  if (which.thread)
    sub->add_option("--thread", o.tid, "only the thread with this TID")->type_name("TID");
  if (which.max_depth)
    sub->add_option("--max-depth", o.max_depth, "drop calls nested N or more levels deep (0: all)")
        ->type_name("N");
}

std::optional<analysis::FilterSet> make_filters_or_fail(const std::string& command,
                                                        const FilterOptions& o,
                                                        const format::Recording& rec) {
  analysis::FilterSet f;
  for (auto [text, slot] :
       {std::pair{&o.include, &f.include}, std::pair{&o.exclude, &f.exclude},
        std::pair{&o.focus, &f.focus}, std::pair{&o.callee_of, &f.callee_of},
        std::pair{&o.hide, &f.hide}, std::pair{&o.caller_of, &f.caller_of}}) {
    if (text->empty()) continue;
    auto re = analysis::compile_filter_regex(*text);
    if (!re) {
      fail(command, re.error(), 2);
      return std::nullopt;
    }
    *slot = std::move(re.value());
  }
  if (!o.time_range.empty()) {
    auto range = analysis::parse_time_range(o.time_range);
    if (!range) {
      fail(command, range.error(), 2);
      return std::nullopt;
    }
    f.range_ns = *range;
    auto origin = analysis::set_origin(f, rec);
    if (!origin) {
      fail(command, origin.error());
      return std::nullopt;
    }
  }
  f.min_duration_ns = o.min_duration_ns;
  f.max_depth = o.max_depth;
  f.tid = o.tid;
  return f;
}

}  // namespace callmon::tools
