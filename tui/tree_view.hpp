// The calling-context tree with folding, as the tui's tree view shows it: one row per
// visible context (a call path aggregated over its calls, analysis/graph.hpp), children in
// order of time. Memory and work grow with the distinct call paths and the rows shown, never
// with the calls; folding splices rows in and out instead of rebuilding the list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/graph.hpp"

namespace callmon::tui {

struct TreeRow {
  uint32_t node = 0;   // index into CallGraph::contexts
  uint32_t depth = 0;  // 0 for the outermost calls
};

class TreeView {
 public:
  // At most this many rows are opened at start and by one expand_all().
  static constexpr size_t kExpandLimit = 2000;

  TreeView() = default;
  // Sorts the children of every context of `graph` by time, descending (ties by name), and
  // opens the tree level by level while it fits kExpandLimit rows (at least one level).
  // `graph` must outlive the view; its contexts may be empty (no calls).
  explicit TreeView(analysis::CallGraph* graph);

  const std::vector<TreeRow>& rows() const { return rows_; }
  bool has_children(uint32_t node) const;
  bool expanded(uint32_t node) const { return node < open_.size() && open_[node]; }

  // Folding of the row at `row` (ignored past the end or on a leaf).
  void expand(size_t row);
  void collapse(size_t row);
  void toggle(size_t row);
  // Opens the whole subtree of `row`, at most kExpandLimit more rows (breadth first).
  // Returns false when the limit stopped it.
  bool expand_all(size_t row);
  // Folds every context: only the outermost calls stay.
  void collapse_all();

  // The row of the parent of the row at `row` (itself for an outermost call).
  size_t parent_row(size_t row) const;
  // Opens the ancestors of `node` and returns its row.
  size_t reveal(uint32_t node);
  // Every context but the root, in the order the fully opened tree would list them.
  std::vector<uint32_t> preorder() const;

 private:
  // Appends the visible rows of `node`'s subtree (its children and below) to `out`.
  void append_open_children(uint32_t node, uint32_t depth, std::vector<TreeRow>& out) const;
  void rebuild();

  analysis::CallGraph* graph_ = nullptr;
  std::vector<bool> open_;
  std::vector<TreeRow> rows_;
};

}  // namespace callmon::tui
