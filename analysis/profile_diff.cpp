// Pairing of two flat profiles (profile_diff.hpp).
#include "analysis/profile_diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "analysis/figure_range.hpp"
#include "analysis/thread_problems.hpp"  // base_name

namespace callmon::analysis {

bool DiffFigure::old_uncertain() const { return is_uncertain(old_lo, old_hi); }
bool DiffFigure::new_uncertain() const { return is_uncertain(new_lo, new_hi); }

double DiffFigure::claimed_change() const {
  if (!uncertain()) return new_ns - old_ns;
  if (within_uncertainty()) return 0;
  return change_lo() > 0 ? change_lo() : change_hi();
}

namespace {

void add_old(DiffFigure& d, double ns, double lo, double hi) {
  d.old_ns += ns;
  d.old_lo += lo;
  d.old_hi += hi;
}
void add_new(DiffFigure& d, double ns, double lo, double hi) {
  d.new_ns += ns;
  d.new_lo += lo;
  d.new_hi += hi;
}

}  // namespace

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
    add_old(r.self, f.self_ns, f.self_lo_ns, f.self_hi_ns);
    add_old(r.total, f.total_ns, f.total_lo_ns, f.total_hi_ns);
  }
  for (const FunctionRow& f : after.functions) {
    DiffRow& r = row_for(f);
    r.in_new = true;
    r.new_calls += f.calls;
    add_new(r.self, f.self_ns, f.self_lo_ns, f.self_hi_ns);
    add_new(r.total, f.total_ns, f.total_lo_ns, f.total_hi_ns);
  }
  for (auto& [key, r] : rows) d.rows.push_back(std::move(r));
  std::stable_sort(d.rows.begin(), d.rows.end(), [](const DiffRow& a, const DiffRow& b) {
    double da = std::fabs(a.total.claimed_change());
    double db = std::fabs(b.total.claimed_change());
    if (da != db) return da > db;
    return a.name < b.name;
  });
  return d;
}

}  // namespace callmon::analysis
