// session.json: what `callmon record` ran and how it ended (see docs/format.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "format/result.hpp"

namespace callmon::format {

// The machine when `callmon record` started the program (uftrace's info shows the same).
struct MachineFacts {
  std::string cpu_model;       // /proc/cpuinfo "model name", empty if unknown
  uint32_t cpus_online = 0;    // sysconf(_SC_NPROCESSORS_ONLN)
  uint32_t cpus_total = 0;     // sysconf(_SC_NPROCESSORS_CONF)
  uint64_t mem_total_kib = 0;  // /proc/meminfo MemTotal
  uint64_t mem_available_kib = 0;  // MemAvailable
  double load[3] = {0, 0, 0};  // load average over 1, 5 and 15 minutes
  std::string kernel;          // uname: "Linux 6.1.0-13-amd64"
  std::string hostname;
};

// What the program and the children it waited for used (getrusage RUSAGE_CHILDREN after it
// ended).
struct RunUsage {
  double user_s = 0, system_s = 0;  // CPU time
  uint64_t max_rss_kib = 0;         // the largest resident set of any of them
  uint64_t minor_faults = 0, major_faults = 0;
  uint64_t voluntary_switches = 0, involuntary_switches = 0;
};

struct Session {
  std::vector<std::string> command;
  std::string cwd;
  int64_t start_unix_ns = 0;
  std::optional<int64_t> end_unix_ns;
  std::optional<int> exit_status;   // callmon's exit status (128+signal when killed)
  std::optional<int> exit_signal;   // the signal that killed the program, if any
  std::string callmon_version;
  // Recorded since callmon 0.x's issue 22; absent in older recordings (still readable).
  std::optional<uint32_t> pid;  // the program's process id
  std::optional<MachineFacts> machine;
  std::optional<RunUsage> usage;
  // `callmon record -p`: recorded from an attach to a running program until the detach
  // (true), or until the program ended during the recording (false). Absent otherwise.
  std::optional<bool> attached_detached;
};

// The facts as session.json holds them (and `info --format=json` shows them): objects of
// the fields above under their names, the load average as an array of three.
nlohmann::json machine_json(const MachineFacts& m);
nlohmann::json usage_json(const RunUsage& u);

Result<Session> read_session(const std::string& path);
// Writes atomically (temporary file + rename).
Status write_session(const std::string& path, const Session& session);

}  // namespace callmon::format
