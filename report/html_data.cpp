// The data blob of the HTML page (html_report.hpp): the pruned calling-context tree and the
// compact JSON the page's script reads. Rows are arrays, not objects, so a program with
// 50 000 functions still gives a page of a few MB; docs/html.md lists the columns.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "analysis/figure_range.hpp"
#include "report/html_report.hpp"
#include "report/shown_names.hpp"
#include "report/units.hpp"

namespace callmon::report {
namespace {

using json = nlohmann::ordered_json;
using analysis::CallGraph;
using analysis::ContextNode;

// Children of a context, larger time first, then by name (stable output for the tests).
std::vector<uint32_t> sorted_children(const CallGraph& g, const std::vector<ContextNode>& contexts,
                                      const ContextNode& c) {
  std::vector<uint32_t> kids = c.children;
  std::sort(kids.begin(), kids.end(), [&](uint32_t a, uint32_t b) {
    const ContextNode& x = contexts[a];
    const ContextNode& y = contexts[b];
    if (x.time_ns != y.time_ns) return x.time_ns > y.time_ns;
    const auto& fx = g.functions[x.func];
    const auto& fy = g.functions[y.func];
    if (fx.name != fy.name) return fx.name < fy.name;
    return fx.module < fy.module;
  });
  return kids;
}

// A figure's range as [low, high] where it is uncertain (figure_range.hpp), else null.
json range_json(const analysis::NsRange& r) {
  if (!analysis::is_uncertain(r.lo, r.hi)) return nullptr;
  return json::array({ns_int(r.lo), ns_int(r.hi)});
}

// Appends the optional columns `extra` to `row`, leaving out the trailing ones that hold
// their default (null or 0): a page without ranges or scheduler time stays as small as it was.
void append_optional(json& row, std::vector<json> extra) {
  while (!extra.empty() && (extra.back().is_null() || extra.back() == 0)) extra.pop_back();
  for (json& e : extra) row.push_back(std::move(e));
}

json summary_json(const CallGraph& g, const HtmlPageInfo& info) {
  double time_ns = 0;
  for (const analysis::GraphArc& a : g.arcs)
    if (a.caller == analysis::kGraphRoot) time_ns += a.time_ns;
  uint64_t called = 0;
  for (const auto& f : g.functions) called += f.calls > 0;
  json s{{"recording", g.recording},
         {"command", nullptr},
         {"exit_status", nullptr},
         {"exit_signal", nullptr},
         {"start_unix_ns", nullptr},
         {"total_calls", g.total_calls},
         {"time_ns", ns_int(time_ns)},
         {"functions", called},
         {"processes", g.processes},
         {"threads", g.threads},
         {"compensated", info.compensated},
         {"filters", info.filters},
         {"warnings", g.warnings}};
  if (info.session) {
    s["command"] = info.session->command;
    if (info.session->exit_status) s["exit_status"] = *info.session->exit_status;
    if (info.session->exit_signal) s["exit_signal"] = *info.session->exit_signal;
    if (info.session->start_unix_ns) s["start_unix_ns"] = info.session->start_unix_ns;
  }
  return s;
}

json tree_json(const CallGraph& g, const std::vector<ContextNode>& contexts,
               const HtmlOptions& options);

}  // namespace

FlameTree prune_context_tree(const CallGraph& g, double fraction, uint32_t max_depth) {
  return prune_context_tree(g, g.contexts, fraction, max_depth);
}

FlameTree prune_context_tree(const CallGraph& g, const std::vector<ContextNode>& contexts,
                             double fraction, uint32_t max_depth) {
  FlameTree t;
  t.nodes.push_back(FlameNode{});
  if (contexts.empty()) return t;
  // Subtree sizes, to say how many contexts an "other" node or a cut stands for. A child
  // always comes after its parent in CallGraph::contexts, so one backward pass does it.
  std::vector<uint64_t> size(contexts.size(), 1);
  for (size_t i = contexts.size(); i-- > 1;) size[contexts[i].parent] += size[i];
  t.contexts = size[0] - 1;

  FlameNode& root = t.nodes[0];
  for (uint32_t k : contexts[0].children) {
    root.calls += contexts[k].calls;
    root.time_ns += contexts[k].time_ns;
    root.time_range.lo += contexts[k].time_range.lo;
    root.time_range.hi += contexts[k].time_range.hi;
    root.offcpu_ns += contexts[k].offcpu_ns;
  }
  t.threshold_ns = root.time_ns * fraction;

  struct Item {
    uint32_t context;
    int64_t out;     // its index in t.nodes
    uint32_t depth;  // of the context (the root's children: 1)
  };
  std::vector<Item> stack{{0, 0, 0}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    const ContextNode& c = contexts[it.context];
    if (c.children.empty()) continue;
    if (it.depth >= max_depth) {
      t.cut += size[it.context] - 1;
      continue;
    }
    FlameNode other;
    other.parent = it.out;
    std::vector<Item> kept;
    for (uint32_t k : sorted_children(g, contexts, c)) {
      const ContextNode& child = contexts[k];
      if (child.time_ns > 0 && child.time_ns >= t.threshold_ns) {
        kept.push_back({k, static_cast<int64_t>(t.nodes.size()), it.depth + 1});
        t.nodes.push_back(FlameNode{it.out, child.func, child.calls, child.time_ns,
                                    child.self_ns, 0, child.time_range, child.self_range,
                                    child.offcpu_ns});
      } else {
        other.calls += child.calls;
        other.time_ns += child.time_ns;
        other.time_range.lo += child.time_range.lo;
        other.time_range.hi += child.time_range.hi;
        other.offcpu_ns += child.offcpu_ns;
        other.merged += size[k];
      }
    }
    if (other.merged > 0) {
      other.self_ns = other.time_ns;  // shown without children
      other.self_range = other.time_range;
      t.merged += other.merged;
      t.nodes.push_back(other);
    }
    for (auto k = kept.rbegin(); k != kept.rend(); ++k) stack.push_back(*k);
  }
  return t;
}

namespace {

// A pruned tree as the page reads it (docs/html.md: "tree").
json tree_json(const CallGraph& g, const std::vector<ContextNode>& contexts,
               const HtmlOptions& options) {
  FlameTree t = prune_context_tree(g, contexts, options.prune_fraction, options.max_tree_depth);
  json nodes = json::array();
  for (const FlameNode& n : t.nodes) {
    json row = json::array(
        {n.parent, n.func, n.calls, ns_int(n.time_ns), ns_int(n.self_ns), n.merged});
    append_optional(row, {range_json(n.time_range), range_json(n.self_range), ns_int(n.offcpu_ns)});
    nodes.push_back(std::move(row));
  }
  return json{{"contexts", t.contexts},
              {"merged", t.merged},
              {"cut", t.cut},
              {"fraction", options.prune_fraction},
              {"max_depth", options.max_tree_depth},
              {"threshold_ns", t.threshold_ns},
              {"nodes", std::move(nodes)}};
}

}  // namespace

std::string html_data_json(const CallGraph& g, const HtmlPageInfo& info,
                           const HtmlOptions& options) {
  json root{{"format", 1}, {"summary", summary_json(g, info)}};
  json funcs = json::array();
  // The page shows each function by its label (--demangle, told apart where short names
  // collide) and keeps the full name after the figures, for the function's page and
  // tooltips; the optional columns follow.
  std::vector<std::string> names;
  for (const auto& f : g.functions) names.push_back(f.name);
  const std::vector<std::string> labels = shown_row_names(names);
  for (size_t i = 0; i < g.functions.size(); ++i) {
    const auto& f = g.functions[i];
    json row = json::array({labels[i], f.module, f.file, f.line, f.calls, ns_int(f.total_ns),
                            ns_int(f.self_ns), f.name});
    append_optional(row, {range_json(f.total_range), range_json(f.self_range),
                          ns_int(f.offcpu_ns), ns_int(f.preempted_ns), f.clocked_calls});
    funcs.push_back(std::move(row));
  }
  root["functions"] = std::move(funcs);
  json arcs = json::array();
  for (const auto& a : g.arcs) {
    if (a.calls == 0) continue;
    int64_t caller = a.caller == analysis::kGraphRoot ? -1 : int64_t{a.caller};
    json row = json::array({caller, a.callee, a.calls, ns_int(a.time_ns), ns_int(a.self_ns)});
    append_optional(row, {range_json(a.time_range), range_json(a.self_range)});
    arcs.push_back(std::move(row));
  }
  root["arcs"] = std::move(arcs);

  root["tree"] = tree_json(g, g.contexts, options);
  if (!g.thread_views.empty()) {
    json threads = json::array();
    for (const analysis::ThreadView& v : g.thread_views) {
      json boxes = json::array();
      json marks = json::array();
      const double origin = v.timeline.empty() ? 0 : v.timeline.front().start_ns;
      for (const analysis::TimelineEntry& e : v.timeline) {
        // [box, marks, pieces] of the boxes that hold pieces of calls (timeline.hpp): a
        // continuation, a piece a switch suspended, an inherited frame.
        if (e.marks != 0) {
          marks.push_back(boxes.size() / 6);
          marks.push_back(e.marks);
          marks.push_back(e.pieces);
        }
        // [start, duration, depth, func, count, busy]: flat, six numbers a box; times in
        // whole ns from the thread's first call.
        boxes.push_back(ns_int(e.start_ns - origin));
        boxes.push_back(ns_int(e.end_ns - e.start_ns));
        boxes.push_back(e.depth);
        boxes.push_back(e.func);
        boxes.push_back(e.count);
        boxes.push_back(ns_int(e.busy_ns));
      }
      json thread{{"pid", v.pid},
                  {"tid", v.tid},
                  {"name", v.name},
                  {"calls", v.calls},
                  {"tree", tree_json(g, v.contexts, options)},
                  {"merged_below_ns", v.merged_below_ns},
                  {"timeline", std::move(boxes)}};
      if (!marks.empty()) thread["marks"] = std::move(marks);  // left out: as before them
      threads.push_back(std::move(thread));
    }
    root["threads"] = std::move(threads);
  }

  std::string text = root.dump(-1, ' ', false, json::error_handler_t::replace);
  // No "</script>" or "<!--" can appear inside the <script> element: '<' only occurs in
  // JSON strings, where \u003c means the same character.
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  for (char ch : text) {
    if (ch == '<')
      out += "\\u003c";
    else
      out += ch;
  }
  return out;
}

}  // namespace callmon::report
