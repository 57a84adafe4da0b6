// Renders a call graph (analysis/graph.hpp) as the output of `callmon graph`: per function
// its callers and callees with the per-arc counts and times, or the calling-context tree,
// as aligned text or JSON (docs/graph.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/graph.hpp"

namespace callmon::report {

struct GraphRenderOptions {
  std::vector<bool> selected;  // per function: shown; empty = all
  uint32_t depth = 0;          // tree: hide contexts at depth >= N (0: all)
  bool colour = false;         // text: times coloured by size (report/colour.hpp)
};

// The functions in display order (total descending, then name), selected ones only.
std::vector<uint32_t> graph_function_order(const analysis::CallGraph& g,
                                           const GraphRenderOptions& o);
// The arcs into (`callers`) or out of function `f`, by time descending then name.
std::vector<const analysis::GraphArc*> graph_arcs_of(const analysis::CallGraph& g, uint32_t f,
                                                     bool callers);
// Children of a context node by time descending then name.
std::vector<uint32_t> graph_children(const analysis::CallGraph& g, uint32_t node);
// The name of a caller index ("<root>" for kGraphRoot).
const std::string& graph_name(const analysis::CallGraph& g, uint32_t f);

std::string render_graph_text(const analysis::CallGraph& g, const GraphRenderOptions& o);
std::string render_graph_json(const analysis::CallGraph& g, const GraphRenderOptions& o);
std::string render_tree_text(const analysis::CallGraph& g, const GraphRenderOptions& o);
std::string render_tree_json(const analysis::CallGraph& g, const GraphRenderOptions& o);

}  // namespace callmon::report
