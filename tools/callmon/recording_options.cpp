// Shared recording options and helpers of the reading subcommands (recording_options.hpp).
#include "tools/callmon/recording_options.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <set>

#include "tools/callmon/command.hpp"

namespace callmon::tools {

void add_recording_option(CLI::App* sub, std::string& dir) {
  sub->add_option("-d,--dir", dir, "recording directory to read (default: callmon.data)")
      ->type_name("DIR");
}

std::optional<format::Recording> open_recording_or_fail(const std::string& command,
                                                        const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    fail(command, dir + ": no such directory");
    return std::nullopt;
  }
  if (!S_ISDIR(st.st_mode)) {
    fail(command, dir + ": not a directory");
    return std::nullopt;
  }
  auto rec = format::open_recording(dir);
  if (!rec) {
    std::string msg = rec.error();
    // Name the directory unless the reader's message already names a file in it.
    if (msg.find(dir) == std::string::npos) msg = dir + ": " + msg;
    fail(command, msg);
    return std::nullopt;
  }
  print_warnings(command, rec->warnings);
  rec->warnings.clear();  // printed once here
  return std::move(rec).value();
}

void print_warnings(const std::string& command, const std::vector<std::string>& messages) {
  std::set<std::string> seen;
  for (const std::string& m : messages) {
    if (seen.insert(m).second) warn(command, m);
  }
}

Progress::Progress(std::string command)
    : command_(std::move(command)),
      enabled_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { finish(); }

analysis::ProgressFn Progress::callback() {
  if (!enabled_) return {};
  return [this](uint64_t done, uint64_t total) { update(done, total); };
}

void Progress::update(uint64_t done, uint64_t total) {
  auto elapsed = std::chrono::steady_clock::now() - start_;
  if (elapsed < std::chrono::seconds(1) || total == 0) return;
  double pct = 100.0 * static_cast<double>(std::min(done, total)) / static_cast<double>(total);
  std::fprintf(stderr, "\rcallmon %s: reading %.0f%% ", command_.c_str(), pct);
  std::fflush(stderr);
  shown_ = true;
}

void Progress::finish() {
  if (!shown_) return;
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(command_.size()) + 30, "");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace callmon::tools
