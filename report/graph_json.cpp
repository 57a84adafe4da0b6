// JSON rendering of the call graph and the calling-context tree (graph_render.hpp). The
// tree is a flat preorder list with parent ids, so no consumer needs deep recursion.
#include <nlohmann/json.hpp>

#include <cmath>

#include "analysis/cxx_names.hpp"
#include "analysis/figure_range.hpp"
#include "report/graph_render.hpp"
#include "report/units.hpp"

namespace callmon::report {
namespace {

using json = nlohmann::ordered_json;
using analysis::CallGraph;

json root_json(const CallGraph& g) {
  return json{{"recording", g.recording},
              {"total_calls", g.total_calls},
              {"processes", g.processes},
              {"threads", g.threads}};
}

// Adds KEY_range: [low, high] to `j` when the range is uncertain (figure_range.hpp), as
// report's JSON does.
void add_range(json& j, const char* key, const analysis::NsRange& r) {
  if (analysis::is_uncertain(r.lo, r.hi))
    j[std::string(key) + "_range"] = json::array({ns_int(r.lo), ns_int(r.hi)});
}

json arc_json(const CallGraph& g, const analysis::GraphArc& a, uint32_t other) {
  json j{{"name", graph_name(g, other)},
         {"short_name", analysis::short_name(graph_name(g, other))},
         {"module", other == analysis::kGraphRoot ? "" : g.functions[other].module},
         {"calls", a.calls},
         {"time_ns", ns_int(a.time_ns)},
         {"self_ns", ns_int(a.self_ns)}};
  add_range(j, "time_ns", a.time_range);
  add_range(j, "self_ns", a.self_range);
  return j;
}

std::string dump(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace

std::string render_graph_json(const CallGraph& g, const GraphRenderOptions& o) {
  json root = root_json(g);
  json funcs = json::array();
  for (uint32_t f : graph_function_order(g, o)) {
    const auto& fn = g.functions[f];
    json callers = json::array();
    for (const auto* a : graph_arcs_of(g, f, true)) callers.push_back(arc_json(g, *a, a->caller));
    json callees = json::array();
    for (const auto* a : graph_arcs_of(g, f, false)) callees.push_back(arc_json(g, *a, a->callee));
    json jf{{"name", fn.name},
            {"short_name", analysis::short_name(fn.name)},
            {"module", fn.module},
            {"calls", fn.calls},
            {"total_ns", ns_int(fn.total_ns)},
            {"self_ns", ns_int(fn.self_ns)}};
    add_range(jf, "total_ns", fn.total_range);
    add_range(jf, "self_ns", fn.self_range);
    jf["callers"] = std::move(callers);
    jf["callees"] = std::move(callees);
    funcs.push_back(std::move(jf));
  }
  root["functions"] = std::move(funcs);
  return dump(root);
}

std::string render_tree_json(const CallGraph& g, const GraphRenderOptions& o) {
  json root = root_json(g);
  json list = json::array();
  struct Item {
    uint32_t node;
    int64_t shown;  // depth below the first selected context of the path, -1: none yet
    int64_t parent_out;  // id in the output of the nearest shown ancestor, -1: none
  };
  std::vector<Item> stack;
  auto push_children = [&](uint32_t node, int64_t shown, int64_t parent_out) {
    auto kids = graph_children(g, node);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      stack.push_back({*it, shown, parent_out});
  };
  push_children(0, o.selected.empty() ? 0 : -1, -1);
  int64_t next_id = 0;
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    const auto& c = g.contexts[it.node];
    int64_t shown = it.shown;
    if (shown < 0 && o.selected[c.func]) shown = 0;
    int64_t id = -1;
    if (shown >= 0) {
      if (o.depth != 0 && shown >= o.depth) continue;
      id = next_id++;
      json parent = shown == 0 ? json(nullptr) : json(it.parent_out);
      json jc{{"id", id},
              {"parent", parent},
              {"depth", shown},
              {"name", g.functions[c.func].name},
              {"short_name", analysis::short_name(g.functions[c.func].name)},
              {"module", g.functions[c.func].module},
              {"calls", c.calls},
              {"total_ns", ns_int(c.time_ns)},
              {"self_ns", ns_int(c.self_ns)}};
      add_range(jc, "total_ns", c.time_range);
      add_range(jc, "self_ns", c.self_range);
      list.push_back(std::move(jc));
    }
    push_children(it.node, shown >= 0 ? shown + 1 : -1, id);
  }
  root["contexts"] = std::move(list);
  return dump(root);
}

}  // namespace callmon::report
