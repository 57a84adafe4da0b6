// Builds the flat profile of a whole recording: walks every thread of every process,
// aggregates per (process, address), symbolizes only the distinct addresses, then merges
// rows by (demangled name, module path) so several processes (fork, exec) and ASLR'd
// addresses of one function become one row. Optional groups per process or per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/filters.hpp"
#include "analysis/flat_profile.hpp"
#include "analysis/thread_problems.hpp"
#include "format/recording.hpp"
#include "format/result.hpp"

namespace callmon::analysis {

enum class GroupBy { kNone, kProcess, kThread };

struct ProfileGroup {
  std::string process_key;
  uint32_t pid = 0;
  uint32_t tid = 0;          // per-thread groups only
  std::string thread_name;   // per-thread groups only
  std::vector<FunctionRow> functions;  // unsorted
};

struct Profile {
  std::string recording;  // the directory
  uint64_t total_calls = 0;
  size_t processes = 0;
  size_t threads = 0;
  GroupBy group_by = GroupBy::kNone;
  std::vector<FunctionRow> functions;  // whole recording, unsorted
  std::vector<ProfileGroup> groups;    // empty unless group_by != kNone
  std::vector<std::string> warnings;   // damage, lost events, symbolization problems
};

struct ProfileOptions {
  GroupBy group_by = GroupBy::kNone;
  bool compensate = true;  // subtract the recording's measured probe cost
  const FilterSet* filters = nullptr;  // may be null (analysis/filters.hpp)
  ProgressFn progress;  // may be empty
};

// Walks every thread file of `rec`. Errors: a thread file that cannot be opened (corrupt
// header); damage that still lets reading go on becomes a warning instead.
Result<Profile> build_profile(const format::Recording& rec, const ProfileOptions& options);

}  // namespace callmon::analysis
