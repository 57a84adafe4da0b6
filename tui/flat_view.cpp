// Sorting of the flat view (flat_view.hpp).
#include "tui/flat_view.hpp"

#include <algorithm>

namespace callmon::tui {

using analysis::SortKey;

const std::vector<SortKey>& FlatView::columns() {
  static const std::vector<SortKey> keys = {SortKey::kTotal, SortKey::kSelf, SortKey::kCalls,
                                            SortKey::kAvg,   SortKey::kMin,  SortKey::kMax,
                                            SortKey::kName};
  return keys;
}

const char* FlatView::column_name(SortKey key) {
  switch (key) {
    case SortKey::kTotal: return "Total";
    case SortKey::kSelf: return "Self";
    case SortKey::kCalls: return "Calls";
    case SortKey::kAvg: return "Avg";
    case SortKey::kMin: return "Min";
    case SortKey::kMax: return "Max";
    case SortKey::kName: return "Function";
  }
  return "";
}

FlatView::FlatView(std::vector<analysis::FunctionRow> rows) : rows_(std::move(rows)) {
  sort(SortKey::kTotal);
}

void FlatView::sort(SortKey key) {
  key_ = key;
  analysis::sort_functions(rows_, key);
}

void FlatView::next_sort(int step) {
  const auto& keys = columns();
  long n = static_cast<long>(keys.size());
  long i = std::find(keys.begin(), keys.end(), key_) - keys.begin();
  sort(keys[static_cast<size_t>(((i + step) % n + n) % n)]);
}

}  // namespace callmon::tui
