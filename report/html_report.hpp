// `callmon html`: one self-contained HTML page of a recording (docs/html.md). The page is a
// template with its CSS and JS inlined at build time (report/html/, embed.cmake) plus one
// JSON data blob built here from the call graph: the summary, every function with its
// flat-profile figures and source line, every caller->callee arc, and the calling-context
// tree pruned for the flame graph, and per thread its own pruned tree and its calls in time
// order (analysis/timeline.hpp: bounded, short calls merged). Besides those bounded boxes
// only aggregates go into the page, so its size grows with the program's structure, not
// with the number of calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/graph.hpp"
#include "format/session.hpp"

namespace callmon::report {

// What the page says about how it was made, besides the graph itself.
struct HtmlPageInfo {
  std::optional<format::Session> session;  // the recording's session.json, if any
  bool compensated = true;
  std::string filters;  // the analysis filters as given on the command line, "" if none
};

enum class HtmlPacking { kAuto, kAlways, kNever };

struct HtmlOptions {
  double prune_fraction = 0.001;  // contexts below this share of the total become "other"
  uint32_t max_tree_depth = 256;  // flame graph levels kept below the root
  // The data blob goes into the page gzipped and in base64 (kAuto: when its JSON is larger
  // than pack_above bytes): browsers load a large inline JSON slowly.
  HtmlPacking packing = HtmlPacking::kAuto;
  size_t pack_above = size_t{1} << 20;
};

// One node of the pruned calling-context tree. Parents come before their children; the
// children of a node are listed together, larger time first, its "other" node last.
struct FlameNode {
  int64_t parent = -1;  // index in FlameTree::nodes, -1 for the root (node 0)
  int64_t func = -1;    // index into CallGraph::functions; -1 for the root and "other"
  uint64_t calls = 0;
  double time_ns = 0;
  double self_ns = 0;
  uint64_t merged = 0;  // "other": how many contexts (with their subtrees) it stands for
  analysis::NsRange time_range, self_range;  // bounds holding the true figures
  double offcpu_ns = 0;  // time its thread was blocked, inside time_ns
};

struct FlameTree {
  std::vector<FlameNode> nodes;  // [0] is the root: every thread's outermost calls
  uint64_t contexts = 0;         // contexts in the full tree (root excluded)
  uint64_t merged = 0;           // contexts folded into "other" nodes
  uint64_t cut = 0;              // contexts left out below max_tree_depth
  double threshold_ns = 0;       // a context shorter than this was merged
};

// Prunes the calling-context tree of `g` (built with GraphOptions::tree): below a parent,
// the children whose time is under `fraction` of the root's time (or zero) are merged into
// one "other" node; levels deeper than `max_depth` are left out. Iterative: any depth.
FlameTree prune_context_tree(const analysis::CallGraph& g, double fraction, uint32_t max_depth);
// The same for any context tree over `g`'s functions (a thread's own, ThreadView).
FlameTree prune_context_tree(const analysis::CallGraph& g,
                             const std::vector<analysis::ContextNode>& contexts, double fraction,
                             uint32_t max_depth);

// The data blob of the page as compact JSON, safe inside a <script> element (every '<' is
// written as \u003c). Layout in docs/html.md.
std::string html_data_json(const analysis::CallGraph& g, const HtmlPageInfo& info,
                           const HtmlOptions& options);

// Gzip (RFC 1952) then base64 of `text`; nothing if zlib fails.
std::optional<std::string> gzip_base64(std::string_view text);

// The whole page: the built-in template with `html_data_json` in place, packed as the
// options say (the data element's data-encoding is then "gzip+base64").
std::string render_html(const analysis::CallGraph& g, const HtmlPageInfo& info,
                        const HtmlOptions& options);

}  // namespace callmon::report
