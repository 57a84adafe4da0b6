// Callers and callees of one function, as `callmon graph FUNC` lists them (the arcs of
// analysis/graph.hpp, ordered by report/graph_render.hpp): the tui's jump view. Going to a
// caller or callee pushes the function left behind, so back() retraces the jumps.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/graph.hpp"

namespace callmon::tui {

struct XrefLine {
  enum class Kind { kHeading, kCaller, kFunction, kCallee };
  Kind kind = Kind::kHeading;
  const char* heading = "";  // kHeading: its text
  uint32_t func = analysis::kGraphRoot;          // the function the line names
  const analysis::GraphArc* arc = nullptr;       // kCaller, kCallee: the arc
};

class XrefView {
 public:
  // `graph` must outlive the view.
  void set_graph(const analysis::CallGraph* graph);
  // Shows `func` (an index into graph.functions); remembers the one shown before.
  void show(uint32_t func);
  // Goes back to the function shown before the last show(); false when there is none.
  bool back();
  bool empty() const { return func_ == analysis::kGraphRoot; }
  uint32_t func() const { return func_; }
  const std::vector<XrefLine>& lines() const { return lines_; }
  // The line the cursor should start on after show() or back(): the function's own.
  size_t function_line() const;

 private:
  void build();

  const analysis::CallGraph* graph_ = nullptr;
  uint32_t func_ = analysis::kGraphRoot;
  std::vector<uint32_t> history_;
  std::vector<XrefLine> lines_;
};

}  // namespace callmon::tui
