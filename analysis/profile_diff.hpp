// Comparison of two flat profiles (`callmon diff`): per function, the change in calls, self
// and total time between a baseline and a new recording. Functions are matched by demangled
// name and module file name (not the full path, so a rebuilt binary in another directory
// still matches); a function present on one side only is kept and marked.
#pragma once

#include <string>
#include <vector>

#include "analysis/profile_builder.hpp"

namespace callmon::analysis {

struct DiffRow {
  std::string name;
  std::string module;  // file name of the module
  bool in_old = false;
  bool in_new = false;
  uint64_t old_calls = 0, new_calls = 0;
  double old_self_ns = 0, new_self_ns = 0;
  double old_total_ns = 0, new_total_ns = 0;
};

struct ProfileDiff {
  std::string old_dir, new_dir;
  uint64_t old_calls = 0, new_calls = 0;
  std::vector<DiffRow> rows;  // sorted by |change in total| (largest first), then name
};

// Pairs the functions of `before` and `after`.
ProfileDiff diff_profiles(const Profile& before, const Profile& after);

}  // namespace callmon::analysis
