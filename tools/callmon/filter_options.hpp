// The analysis filter options shared by report, replay and graph (docs/filters.md):
// add_filter_options() adds them to a subcommand, make_filters_or_fail() turns them into an
// analysis::FilterSet, printing one error line on a bad regex or time range.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "analysis/filters.hpp"
#include "format/recording.hpp"

namespace callmon::tools {

// A CLI11 transform for a duration option: "250us", "1.5ms", "2s" or plain ns become the
// number of ns (analysis::parse_duration), which the option's integer then takes; anything
// else is the option's error.
CLI::Validator duration_ns();

struct FilterOptions {
  std::string include;
  std::string exclude;
  std::string focus;
  std::string callee_of;
  std::string hide;
  std::string caller_of;
  std::string time_range;
  uint64_t min_duration_ns = 0;
  uint32_t max_depth = 0;
  uint32_t tid = 0;
};

struct FilterOptionSet {
  bool thread = true;     // add --thread TID
  bool max_depth = true;  // add --max-depth N
};

// Adds --include, --exclude, --focus, --callee-of, --hide, --caller-of, --min-duration, --time-range and, as asked, --thread and
// --max-depth (commands that already own those leave them out).
void add_filter_options(CLI::App* sub, FilterOptions& o, FilterOptionSet which = {});

// Compiles the options for `rec`. On a bad regex or range prints
// "callmon CMD: error: ..." and returns nothing (the command then exits with status 2).
std::optional<analysis::FilterSet> make_filters_or_fail(const std::string& command,
                                                        const FilterOptions& o,
                                                        const format::Recording& rec);

}  // namespace callmon::tools
