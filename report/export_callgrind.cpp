// callgrind export (report/export.hpp): the callgrind profile format with one event, "ns".
// Each function gets a block "fl= fn=" with its self cost on the line of its start (0 when
// unknown), then one "cfl= cfn= calls=COUNT LINE" + "CALL_LINE inclusive-cost" per function
// it called, CALL_LINE being the line of the call in the caller's code (analysis/
// call_sites.hpp) or, when that is not found, the caller's first line (analysis/export_callgraph.hpp: the inclusive cost of a recursive arc counts the
// outermost of nested activations only). File and function names use the format's name
// compression "(id) name", which also keeps names that start with '(' unambiguous.
// "totals:" is the sum of the self costs: the program's time, as in `callmon report`.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "analysis/export_callgraph.hpp"
#include "analysis/export_walk.hpp"
#include "report/export.hpp"
#include "report/export_stream.hpp"

namespace callmon::report {
namespace {

// Walk visitor: one CallgraphSink per process, merged at the end of the process.
class CallgraphVisitor {
 public:
  void begin_process(const format::ProcessRecording&, analysis::ProcessSymbolizer&) {
    sink_ = analysis::CallgraphSink();
  }
  analysis::CallgraphSink& begin_thread(const analysis::ExportThread&) { return sink_; }
  void end_thread(const analysis::ExportThread&) {}
  void end_process(const format::ProcessRecording& proc, analysis::ProcessSymbolizer& sym) {
    builder_.add_process(proc.meta, sym, sink_);
    sink_ = analysis::CallgraphSink();
  }
  analysis::Callgraph take() { return builder_.take(); }

 private:
  analysis::CallgraphSink sink_;
  analysis::CallgraphBuilder builder_;
};

// Names written as "(id) name" the first time and "(id)" after.
class NameTable {
 public:
  std::string operator()(const std::string& name) {
    auto [it, inserted] = ids_.try_emplace(name, ids_.size() + 1);
    if (!inserted) return fmt::format("({})", it->second);
    // A line break would end the line early: no symbol has one, but stay safe.
    std::string clean = name;
    std::replace(clean.begin(), clean.end(), '\n', ' ');
    return fmt::format("({}) {}", it->second, clean);
  }

 private:
  std::unordered_map<std::string, size_t> ids_;
};

std::string file_of(const analysis::CallgraphFunction& f) {
  return f.file.empty() ? std::string("???") : f.file;
}

long long cost(double ns) { return std::llround(ns); }

}  // namespace

Result<std::vector<std::string>> export_callgrind(const format::Recording& rec,
                                                  const ExportOptions& options,
                                                  std::FILE* out) {
  CallgraphVisitor visitor;
  auto warnings = analysis::walk_recording(rec, options.compensate, options.filters, visitor);
  if (!warnings) return warnings;
  analysis::Callgraph graph = visitor.take();

  ExportStream s(out);
  s.write("# callgrind format\nversion: 1\ncreator: callmon\n");
  if (rec.session && !rec.session->command.empty()) {
    std::string cmd;
    for (const std::string& a : rec.session->command) cmd += (cmd.empty() ? "" : " ") + a;
    std::replace(cmd.begin(), cmd.end(), '\n', ' ');
    s.write("cmd: " + cmd + "\n");
  }
  s.write("positions: line\nevents: ns\n");

  // Arcs grouped by caller, each group in first-seen order.
  std::vector<std::vector<uint32_t>> calls_of(graph.functions.size());
  for (uint32_t i = 0; i < graph.arcs.size(); ++i) calls_of[graph.arcs[i].caller].push_back(i);

  NameTable files;
  NameTable names;
  long long total = 0;
  for (uint32_t i = 0; i < graph.functions.size(); ++i) {
    const analysis::CallgraphFunction& f = graph.functions[i];
    long long self = cost(f.self_ns);
    total += self;
    s.write(fmt::format("\nfl={}\nfn={}\n{} {}\n", files(file_of(f)), names(f.name), f.line,
                        self));
    for (uint32_t a : calls_of[i]) {
      const analysis::CallgraphArc& arc = graph.arcs[a];
      const analysis::CallgraphFunction& callee = graph.functions[arc.callee];
      // The call's cost on the line that makes it, when the code shows it; else on the
      // caller's first line.
      const uint32_t line = arc.call_line != 0 ? arc.call_line : f.line;
      s.write(fmt::format("cfl={}\ncfn={}\ncalls={} {}\n{} {}\n", files(file_of(callee)),
                          names(callee.name), arc.calls, callee.line, line,
                          cost(arc.incl_ns)));
    }
  }
  s.write(fmt::format("\ntotals: {}\n", total));
  if (!s.finish()) return Error{"cannot write the output"};
  return warnings;
}

}  // namespace callmon::report
