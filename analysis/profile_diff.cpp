// Pairing of two flat profiles (profile_diff.hpp).
#include "analysis/profile_diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "analysis/thread_problems.hpp"  // base_name

namespace callmon::analysis {

ProfileDiff diff_profiles(const Profile& before, const Profile& after) {
  ProfileDiff d;
  d.old_dir = before.recording;
  d.new_dir = after.recording;
  d.old_calls = before.total_calls;
  d.new_calls = after.total_calls;
  std::map<std::pair<std::string, std::string>, DiffRow> rows;
  auto row_for = [&](const FunctionRow& f) -> DiffRow& {
    DiffRow& r = rows[{f.name, base_name(f.module)}];
    r.name = f.name;
    r.module = base_name(f.module);
    return r;
  };
  // A profile holds one row per (name, module path); two paths with the same file name add.
  for (const FunctionRow& f : before.functions) {
    DiffRow& r = row_for(f);
    r.in_old = true;
    r.old_calls += f.calls;
    r.old_self_ns += f.self_ns;
    r.old_total_ns += f.total_ns;
  }
  for (const FunctionRow& f : after.functions) {
    DiffRow& r = row_for(f);
    r.in_new = true;
    r.new_calls += f.calls;
    r.new_self_ns += f.self_ns;
    r.new_total_ns += f.total_ns;
  }
  for (auto& [key, r] : rows) d.rows.push_back(std::move(r));
  std::stable_sort(d.rows.begin(), d.rows.end(), [](const DiffRow& a, const DiffRow& b) {
    double da = std::fabs(a.new_total_ns - a.old_total_ns);
    double db = std::fabs(b.new_total_ns - b.old_total_ns);
    if (da != db) return da > db;
    return a.name < b.name;
  });
  return d;
}

}  // namespace callmon::analysis
