// Comparison of two flat profiles (`callmon diff`): per function, the change in calls, self
// and total time between a baseline and a new recording. Functions are matched by demangled
// name and module file name (not the full path, so a rebuilt binary in another directory
// still matches); a function present on one side only is kept and marked.
//
// Every time figure comes with the range that holds the true time (figure_range.hpp). Where
// either side's figure is uncertain, the comparison works on the ranges: the true change lies
// in [new_lo - old_hi, new_hi - old_lo], and when that holds 0 (the ranges overlap) no change
// is claimed: it is within uncertainty. Otherwise the change claimed is the part outside the
// overlap, the end of that interval nearest 0.
#pragma once

#include <string>
#include <vector>

#include "analysis/profile_builder.hpp"

namespace callmon::analysis {

// One time figure on both sides, in ns: the estimates and the ranges around them. A side
// where the function is absent is 0 with the range [0, 0].
struct DiffFigure {
  double old_ns = 0, new_ns = 0;
  double old_lo = 0, old_hi = 0;
  double new_lo = 0, new_hi = 0;

  bool old_uncertain() const;
  bool new_uncertain() const;
  // Either side is uncertain: the comparison is made on the ranges.
  bool uncertain() const { return old_uncertain() || new_uncertain(); }
  // The range holding the true change (new - old).
  double change_lo() const { return new_lo - old_hi; }
  double change_hi() const { return new_hi - old_lo; }
  // Uncertain, and the two ranges overlap: the change may be none.
  bool within_uncertainty() const { return uncertain() && change_lo() <= 0 && change_hi() >= 0; }
  // The change the figures support: new - old when both are certain; else 0 within
  // uncertainty, or the smallest change the ranges allow (signed).
  double claimed_change() const;
};

struct DiffRow {
  std::string name;
  std::string module;  // file name of the module
  bool in_old = false;
  bool in_new = false;
  uint64_t old_calls = 0, new_calls = 0;
  DiffFigure self, total;
};

struct ProfileDiff {
  std::string old_dir, new_dir;
  uint64_t old_calls = 0, new_calls = 0;
  // Sorted by the size of the claimed change in total time (largest first; a change within
  // uncertainty counts as none), then name.
  std::vector<DiffRow> rows;
};

// Pairs the functions of `before` and `after`.
ProfileDiff diff_profiles(const Profile& before, const Profile& after);

}  // namespace callmon::analysis
