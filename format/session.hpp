// session.json: what `callmon record` ran and how it ended (see docs/format.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/result.hpp"

namespace callmon::format {

struct Session {
  std::vector<std::string> command;
  std::string cwd;
  int64_t start_unix_ns = 0;
  std::optional<int64_t> end_unix_ns;
  std::optional<int> exit_status;   // callmon's exit status (128+signal when killed)
  std::optional<int> exit_signal;   // the signal that killed the program, if any
  std::string callmon_version;
};

Result<Session> read_session(const std::string& path);
// Writes atomically (temporary file + rename).
Status write_session(const std::string& path, const Session& session);

}  // namespace callmon::format
