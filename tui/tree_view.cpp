// Folding of the calling-context tree (tree_view.hpp).
#include "tui/tree_view.hpp"

#include <algorithm>

namespace callmon::tui {

TreeView::TreeView(analysis::CallGraph* graph) : graph_(graph) {
  auto& ctx = graph_->contexts;
  open_.assign(ctx.size(), false);
  if (ctx.empty()) return;
  const auto& funcs = graph_->functions;
  for (auto& node : ctx) {
    std::sort(node.children.begin(), node.children.end(), [&](uint32_t a, uint32_t b) {
      if (ctx[a].time_ns != ctx[b].time_ns) return ctx[a].time_ns > ctx[b].time_ns;
      return funcs[ctx[a].func].name < funcs[ctx[b].func].name;
    });
  }
  // Open level by level while the rows shown stay within the limit.
  open_[0] = true;
  std::vector<uint32_t> level = ctx[0].children;
  size_t shown = level.size();
  while (!level.empty()) {
    std::vector<uint32_t> next;
    for (uint32_t n : level) next.insert(next.end(), ctx[n].children.begin(), ctx[n].children.end());
    if (next.empty() || shown + next.size() > kExpandLimit) break;
    for (uint32_t n : level) open_[n] = true;
    shown += next.size();
    level = std::move(next);
  }
  rebuild();
}

bool TreeView::has_children(uint32_t node) const {
  return graph_ && node < graph_->contexts.size() && !graph_->contexts[node].children.empty();
}

void TreeView::append_open_children(uint32_t node, uint32_t depth,
                                    std::vector<TreeRow>& out) const {
  // Iterative: a deep recursion in the program makes a deep tree.
  struct Item {
    uint32_t node, depth;
  };
  std::vector<Item> stack;
  const auto& kids = graph_->contexts[node].children;
  for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back({*it, depth});
  while (!stack.empty()) {
    Item item = stack.back();
    stack.pop_back();
    out.push_back({item.node, item.depth});
    if (!open_[item.node]) continue;
    const auto& c = graph_->contexts[item.node].children;
    for (auto it = c.rbegin(); it != c.rend(); ++it) stack.push_back({*it, item.depth + 1});
  }
}

void TreeView::rebuild() {
  rows_.clear();
  if (graph_ && !graph_->contexts.empty()) append_open_children(0, 0, rows_);
}

void TreeView::expand(size_t row) {
  if (row >= rows_.size()) return;
  TreeRow r = rows_[row];
  if (open_[r.node] || !has_children(r.node)) return;
  open_[r.node] = true;
  std::vector<TreeRow> added;
  append_open_children(r.node, r.depth + 1, added);
  rows_.insert(rows_.begin() + static_cast<long>(row) + 1, added.begin(), added.end());
}

void TreeView::collapse(size_t row) {
  if (row >= rows_.size()) return;
  TreeRow r = rows_[row];
  if (!open_[r.node]) return;
  open_[r.node] = false;
  size_t end = row + 1;
  while (end < rows_.size() && rows_[end].depth > r.depth) ++end;
  rows_.erase(rows_.begin() + static_cast<long>(row) + 1, rows_.begin() + static_cast<long>(end));
}

void TreeView::toggle(size_t row) {
  if (row >= rows_.size()) return;
  if (open_[rows_[row].node]) {
    collapse(row);
  } else {
    expand(row);
  }
}

bool TreeView::expand_all(size_t row) {
  if (row >= rows_.size()) return true;
  collapse(row);
  const auto& ctx = graph_->contexts;
  std::vector<uint32_t> level = {rows_[row].node};
  size_t shown = 0;
  bool complete = true;
  while (!level.empty()) {
    std::vector<uint32_t> next;
    for (uint32_t n : level) next.insert(next.end(), ctx[n].children.begin(), ctx[n].children.end());
    if (next.empty()) break;
    if (shown + next.size() > kExpandLimit) {
      complete = false;
      break;
    }
    for (uint32_t n : level) open_[n] = true;
    shown += next.size();
    level = std::move(next);
  }
  // open_ of the row itself is set now; splice its subtree in.
  std::vector<TreeRow> added;
  if (open_[rows_[row].node]) append_open_children(rows_[row].node, rows_[row].depth + 1, added);
  rows_.insert(rows_.begin() + static_cast<long>(row) + 1, added.begin(), added.end());
  return complete;
}

void TreeView::collapse_all() {
  std::fill(open_.begin(), open_.end(), false);
  if (!open_.empty()) open_[0] = true;
  rebuild();
}

size_t TreeView::parent_row(size_t row) const {
  if (row >= rows_.size()) return row;
  uint32_t depth = rows_[row].depth;
  if (depth == 0) return row;
  size_t i = row;
  while (i > 0 && rows_[i].depth >= depth) --i;
  return i;
}

size_t TreeView::reveal(uint32_t node) {
  std::vector<uint32_t> chain;
  for (uint32_t n = node; n != 0; n = graph_->contexts[n].parent) chain.push_back(n);
  // Open from the outermost down, each expand splicing in the next level.
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (*it == node) break;
    if (open_[*it]) continue;
    auto pos = std::find_if(rows_.begin(), rows_.end(),
                            [&](const TreeRow& r) { return r.node == *it; });
    if (pos != rows_.end()) expand(static_cast<size_t>(pos - rows_.begin()));
  }
  auto pos =
      std::find_if(rows_.begin(), rows_.end(), [&](const TreeRow& r) { return r.node == node; });
  return static_cast<size_t>(pos - rows_.begin());
}

std::vector<uint32_t> TreeView::preorder() const {
  std::vector<uint32_t> out;
  if (!graph_ || graph_->contexts.empty()) return out;
  out.reserve(graph_->contexts.size() - 1);
  std::vector<uint32_t> stack(graph_->contexts[0].children.rbegin(),
                              graph_->contexts[0].children.rend());
  while (!stack.empty()) {
    uint32_t n = stack.back();
    stack.pop_back();
    out.push_back(n);
    const auto& c = graph_->contexts[n].children;
    stack.insert(stack.end(), c.rbegin(), c.rend());
  }
  return out;
}

}  // namespace callmon::tui
