// Fuzz targets of a recording's session files, untrusted input like the rest of a recording
// (docs/security.md): session.json through read_session, and session.sched (the scheduler
// file) through read_sched and its conversion of off-CPU intervals to ticks.
#include <filesystem>

#include "format/sched_file.hpp"
#include "format/session.hpp"
#include "fuzz/targets.hpp"

namespace callmon::fuzz {

void fuzz_session(const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/session.json";
  write_file(path, data, size);
  auto session = format::read_session(path);
  if (session.ok()) (void)session->command.size();
}

void fuzz_sched(const uint8_t* data, size_t size) {
  const std::string dir = scratch_dir() + "/sched";
  std::error_code ec;
  std::filesystem::create_directory(dir, ec);
  write_file(dir + "/" + format::kSchedFileName, data, size);
  auto sched = format::read_sched(dir);
  if (!sched.ok() || !sched->has_value()) return;
  const format::SchedData& s = **sched;
  for (const auto& [key, intervals] : s.threads) {
    (void)intervals.size();
    for (bool tsc : {false, true}) (void)s.to_ticks(key.first, key.second, tsc, 3e9);
  }
}

}  // namespace callmon::fuzz
