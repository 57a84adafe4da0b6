// Callers and callees of one function (xref_view.hpp).
#include "tui/xref_view.hpp"

#include "report/graph_render.hpp"

namespace callmon::tui {

void XrefView::set_graph(const analysis::CallGraph* graph) {
  graph_ = graph;
  func_ = analysis::kGraphRoot;
  history_.clear();
  lines_.clear();
}

void XrefView::show(uint32_t func) {
  if (!graph_ || func >= graph_->functions.size()) return;
  if (!empty() && func != func_) history_.push_back(func_);
  func_ = func;
  build();
}

bool XrefView::back() {
  if (history_.empty()) return false;
  func_ = history_.back();
  history_.pop_back();
  build();
  return true;
}

size_t XrefView::function_line() const {
  for (size_t i = 0; i < lines_.size(); ++i)
    if (lines_[i].kind == XrefLine::Kind::kFunction) return i;
  return 0;
}

void XrefView::build() {
  lines_.clear();
  using Kind = XrefLine::Kind;
  lines_.push_back({Kind::kHeading, "Called by", analysis::kGraphRoot, nullptr});
  for (const analysis::GraphArc* a : report::graph_arcs_of(*graph_, func_, true))
    lines_.push_back({Kind::kCaller, "", a->caller, a});
  lines_.push_back({Kind::kFunction, "", func_, nullptr});
  lines_.push_back({Kind::kHeading, "Calls", analysis::kGraphRoot, nullptr});
  for (const analysis::GraphArc* a : report::graph_arcs_of(*graph_, func_, false))
    lines_.push_back({Kind::kCallee, "", a->callee, a});
}

}  // namespace callmon::tui
