// `callmon graph`: callers and callees of each function with per-arc counts and times, or
// with --tree the calling-context tree, as text or JSON (docs/graph.md).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <regex>

#include "analysis/cxx_names.hpp"
#include "analysis/graph.hpp"
#include "analysis/symbolizer.hpp"
#include "report/graph_render.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/filter_options.hpp"
#include "tools/callmon/pager.hpp"
#include "tools/callmon/name_option.hpp"
#include "tools/callmon/recording_options.hpp"

namespace callmon::tools {
namespace {

struct GraphOptions {
  std::string dir = "callmon.data";
  std::string func;
  std::string format = "text";
  bool tree = false;
  uint32_t depth = 0;
  bool no_compensation = false;
  std::string demangle = "short";
  FilterOptions filters;
  TerminalOptions term;
};

// FUNC selects a function when its name contains it or, if FUNC is a valid regex, when the
// regex matches somewhere in the name.
std::vector<bool> select_functions(const analysis::CallGraph& g, const std::string& func) {
  std::vector<bool> selected(g.functions.size(), false);
  std::optional<std::regex> re;
  try {
    re.emplace(func, std::regex::ECMAScript);
  } catch (const std::regex_error&) {
  }
  for (size_t i = 0; i < g.functions.size(); ++i) {
    // Matched as --include matches: demangled (--demangle=no), without a template
    // function's return type.
    const std::string name =
        analysis::without_return_type(analysis::demangle(g.functions[i].name));
    selected[i] = name.find(func) != std::string::npos || (re && std::regex_search(name, *re));
  }
  return selected;
}

int run_graph(const GraphOptions& o) {
  const std::string cmd = "graph";
  // JSON keeps the full names (and adds the short ones).
  apply_demangle_option(o.format == "text" ? o.demangle : "full");
  auto rec = open_recording_or_fail(cmd, o.dir);
  if (!rec) return 1;
  auto filters = make_filters_or_fail(cmd, o.filters, *rec);
  if (!filters) return 2;

  analysis::GraphOptions go;
  go.compensate = !o.no_compensation;
  go.tree = o.tree;
  go.filters = &*filters;
  Progress progress(cmd);
  go.progress = progress.callback();
  auto graph = analysis::build_graph(*rec, go);
  progress.finish();
  if (!graph) return fail(cmd, graph.error());
  print_warnings(cmd, graph->warnings);

  report::GraphRenderOptions ro;
  ro.depth = o.depth;
  ro.colour = use_colour(o.term);
  if (!o.func.empty()) {
    ro.selected = select_functions(*graph, o.func);
    if (std::find(ro.selected.begin(), ro.selected.end(), true) == ro.selected.end())
      return fail(cmd, "no function matches '" + o.func + "' in " + o.dir +
                           (o.filters.include.empty() && o.filters.exclude.empty()
                                ? ""
                                : " (with these filters)") +
                           "; 'callmon report -d " + o.dir + "' lists the functions");
  }
  bool json = o.format == "json";
  std::string out = o.tree ? (json ? report::render_tree_json(*graph, ro)
                                   : report::render_tree_text(*graph, ro))
                           : (json ? report::render_graph_json(*graph, ro)
                                   : report::render_graph_text(*graph, ro));
  start_pager(o.term);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return finish_stdout(cmd);
}

void setup_graph(CLI::App& app, int& status) {
  auto o = std::make_shared<GraphOptions>();
  CLI::App* sub = app.add_subcommand(
      "graph", "Call graph: callers and callees of each function with per-arc counts and "
               "times, or the calling-context tree (--tree)");
  add_recording_option(sub, o->dir);
  sub->add_option("FUNC", o->func,
                  "show only functions whose name contains FUNC or matches it as a regex "
                  "(--tree: the subtrees of the first matching call on each path)");
  sub->add_option("--format", o->format, "output format: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_flag("--tree", o->tree, "print the calling-context tree instead of the graph");
  sub->add_option("--depth", o->depth, "tree: show N levels (0: all)")->type_name("N");
  sub->add_flag("--no-compensation", o->no_compensation,
                "report measured times as they are, without subtracting the recording's own "
                "cost per call");
  add_filter_options(sub, o->filters);
  add_terminal_options(sub, o->term);
  add_demangle_option(sub, o->demangle);
  sub->callback([o, &status] { status = run_graph(*o); });
}

const CommandRegistration registration_graph("graph", setup_graph);

}  // namespace
}  // namespace callmon::tools
