// Text rendering of the call graph and the calling-context tree (graph_render.hpp), and
// the orderings both renderers share.
#include <fmt/format.h>

#include <algorithm>

#include "report/colour.hpp"
#include "report/graph_render.hpp"
#include "report/shown_names.hpp"
#include "report/units.hpp"

namespace callmon::report {
namespace {

using analysis::CallGraph;
using analysis::GraphArc;

std::string heading(const CallGraph& g) {
  return fmt::format("# {}: {}, {}, {}\n", g.recording, count_of(g.total_calls, "call", "calls"),
                     count_of(g.processes, "process", "processes"),
                     count_of(g.threads, "thread", "threads"));
}

// A time, or its range where uncertain (figure_range.hpp), as report shows it.
std::string figure(double ns, const analysis::NsRange& r) { return human_figure(ns, r.lo, r.hi); }

std::string row(uint64_t calls, double time_ns, const analysis::NsRange& time_range,
                double self_ns, const analysis::NsRange& self_range, size_t indent,
                const std::string& name, bool colour) {
  return fmt::format("{:>8}  {}  {}  {}{}\n", calls,
                     paint_duration(fmt::format("{:>13}", figure(time_ns, time_range)), time_ns,
                                    colour),
                     paint_duration(fmt::format("{:>13}", figure(self_ns, self_range)), self_ns,
                                    colour),
                     std::string(indent, ' '), name);
}

// The graph's function names as --demangle shows them, one label per function (told apart
// where short names collide); "<root>" stays as it is.
std::vector<std::string> function_labels(const CallGraph& g) {
  std::vector<std::string> names;
  names.reserve(g.functions.size());
  for (const auto& fn : g.functions) names.push_back(fn.name);
  return shown_row_names(names);
}

}  // namespace

const std::string& graph_name(const CallGraph& g, uint32_t f) {
  static const std::string root = "<root>";
  return f == analysis::kGraphRoot ? root : g.functions[f].name;
}

std::vector<uint32_t> graph_function_order(const CallGraph& g, const GraphRenderOptions& o) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < g.functions.size(); ++i)
    if ((o.selected.empty() || o.selected[i]) && g.functions[i].calls > 0) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const auto& fa = g.functions[a];
    const auto& fb = g.functions[b];
    if (fa.total_ns != fb.total_ns) return fa.total_ns > fb.total_ns;
    if (fa.name != fb.name) return fa.name < fb.name;
    return fa.module < fb.module;
  });
  return order;
}

std::vector<const GraphArc*> graph_arcs_of(const CallGraph& g, uint32_t f, bool callers) {
  std::vector<const GraphArc*> arcs;
  for (const GraphArc& a : g.arcs)
    if ((callers ? a.callee : a.caller) == f) arcs.push_back(&a);
  std::sort(arcs.begin(), arcs.end(), [&](const GraphArc* a, const GraphArc* b) {
    if (a->time_ns != b->time_ns) return a->time_ns > b->time_ns;
    return graph_name(g, callers ? a->caller : a->callee) <
           graph_name(g, callers ? b->caller : b->callee);
  });
  return arcs;
}

std::vector<uint32_t> graph_children(const CallGraph& g, uint32_t node) {
  std::vector<uint32_t> kids = g.contexts[node].children;
  std::sort(kids.begin(), kids.end(), [&](uint32_t a, uint32_t b) {
    const auto& ca = g.contexts[a];
    const auto& cb = g.contexts[b];
    if (ca.time_ns != cb.time_ns) return ca.time_ns > cb.time_ns;
    return g.functions[ca.func].name < g.functions[cb.func].name;
  });
  return kids;
}

std::string render_graph_text(const CallGraph& g, const GraphRenderOptions& o) {
  std::string out = heading(g);
  const std::vector<std::string> labels = function_labels(g);
  auto label = [&](uint32_t f) -> const std::string& {
    return f == analysis::kGraphRoot ? graph_name(g, f) : labels[f];
  };
  for (uint32_t f : graph_function_order(g, o)) {
    const auto& fn = g.functions[f];
    out += fmt::format("\n{}: {}, total {}, self {}\n", labels[f],
                       count_of(fn.calls, "call", "calls"), figure(fn.total_ns, fn.total_range),
                       figure(fn.self_ns, fn.self_range));
    for (bool callers : {true, false}) {
      auto arcs = graph_arcs_of(g, f, callers);
      if (arcs.empty()) continue;
      out += fmt::format("{:>8}  {:>13}  {:>13}  {}\n", "Calls", "Time", "Self",
                         callers ? "Caller" : "Callee");
      for (const GraphArc* a : arcs)
        out += row(a->calls, a->time_ns, a->time_range, a->self_ns, a->self_range, 0,
                   label(callers ? a->caller : a->callee), o.colour);
    }
  }
  return out;
}

std::string render_tree_text(const CallGraph& g, const GraphRenderOptions& o) {
  std::string out = heading(g);
  const std::vector<std::string> labels = function_labels(g);
  out += fmt::format("{:>8}  {:>13}  {:>13}  {}\n", "Calls", "Total", "Self", "Function");
  // Preorder with an explicit stack: contexts can be as deep as the deepest recursion.
  // `shown` is the depth below the first selected context of the path (-1: none yet).
  struct Item {
    uint32_t node;
    uint32_t depth;
    int64_t shown;
  };
  std::vector<Item> stack;
  auto push_children = [&](uint32_t node, uint32_t depth, int64_t shown) {
    auto kids = graph_children(g, node);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back({*it, depth, shown});
  };
  push_children(0, 0, o.selected.empty() ? 0 : -1);
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    const auto& c = g.contexts[it.node];
    int64_t shown = it.shown;
    if (shown < 0 && o.selected[c.func]) shown = 0;
    if (shown >= 0) {
      if (o.depth != 0 && shown >= o.depth) continue;
      out += row(c.calls, c.time_ns, c.time_range, c.self_ns, c.self_range,
                 2 * static_cast<size_t>(shown),
                 labels[c.func], o.colour);
    }
    push_children(it.node, it.depth + 1, shown >= 0 ? shown + 1 : -1);
  }
  return out;
}

}  // namespace callmon::report
