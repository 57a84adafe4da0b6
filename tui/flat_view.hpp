// The flat profile as the tui's flat view shows it: the rows of `callmon report` (one per
// function, analysis/flat_profile.hpp) sorted by one column, which the user can change.
#pragma once

#include <string>
#include <vector>

#include "analysis/flat_profile.hpp"

namespace callmon::tui {

class FlatView {
 public:
  // The sortable columns, left to right as the view shows them.
  static const std::vector<analysis::SortKey>& columns();
  static const char* column_name(analysis::SortKey key);

  FlatView() = default;
  // Takes the rows (unsorted) and sorts them by total, as report does by default.
  explicit FlatView(std::vector<analysis::FunctionRow> rows);

  const std::vector<analysis::FunctionRow>& rows() const { return rows_; }
  analysis::SortKey sort_key() const { return key_; }
  // Sorts by `key` (analysis::sort_functions: descending, names ascending).
  void sort(analysis::SortKey key);
  // Sorts by the next column to the right (step 1) or left (step -1), wrapping around.
  void next_sort(int step);

 private:
  std::vector<analysis::FunctionRow> rows_;
  analysis::SortKey key_ = analysis::SortKey::kTotal;
};

}  // namespace callmon::tui
