// Helpers shared by the subcommands that read a recording (report, replay, info): the
// common `-d DIR` option, opening the directory with one-line errors, warnings, and a
// progress line on stderr for long reads when stderr is a terminal.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "analysis/thread_problems.hpp"
#include "format/recording.hpp"

namespace callmon::tools {

// Adds "-d,--dir DIR" (default callmon.data) to `sub`.
void add_recording_option(CLI::App* sub, std::string& dir);

// Opens `dir` as a recording. On failure prints "callmon CMD: error: DIR: ..." and returns
// nothing; then the command exits with status 1. Prints the recording's warnings.
std::optional<format::Recording> open_recording_or_fail(const std::string& command,
                                                        const std::string& dir);

// Prints each message as "callmon CMD: warning: MESSAGE", without duplicates.
void print_warnings(const std::string& command, const std::vector<std::string>& messages);

// Progress of a long read: nothing for the first second, then a "\r"-updated percentage
// on stderr, and only when stderr is a terminal. finish() erases the line.
class Progress {
 public:
  explicit Progress(std::string command);
  ~Progress();
  analysis::ProgressFn callback();
  void finish();

 private:
  void update(uint64_t done, uint64_t total);

  std::string command_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace callmon::tools
