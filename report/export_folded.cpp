// Folded ("collapsed stack") export (report/export.hpp): one line "f1;f2;f3 SELF_NS" per
// distinct stack, outermost frame first, with the summed self time of the calls that had
// exactly that stack (self, never inclusive: flame graph tools add the children up
// themselves). Threads and processes merge: equal stacks add up. ';' inside a name would
// split the frame and becomes ':'. Lines are sorted; stacks whose self time rounds to
// zero (or is negative under compensation) are left out. The stack strings are summed in
// bounded memory (analysis/folded_stacks.hpp): past a budget they are spilled, sorted, to
// temporary files and merged as they are written. With fold_recursion, a function already
// on the stack merges into its first occurrence (analysis/export_stacks.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "analysis/export_stacks.hpp"
#include "analysis/export_walk.hpp"
#include "analysis/folded_stacks.hpp"
#include "report/export.hpp"
#include "report/export_stream.hpp"

namespace callmon::report {
namespace {

std::string frame_name(const std::string& name) {
  std::string out = name;
  std::replace(out.begin(), out.end(), ';', ':');
  std::replace(out.begin(), out.end(), '\n', ' ');
  return out;
}

class FoldedVisitor {
 public:
  FoldedVisitor(analysis::FoldedStacks& stacks, bool fold_recursion)
      : stacks_(stacks), fold_recursion_(fold_recursion) {}

  void begin_process(const format::ProcessRecording&, analysis::ProcessSymbolizer&) {
    trie_ = analysis::StackTrie();
  }
  analysis::StackSink& begin_thread(const analysis::ExportThread&) {
    sink_.emplace(trie_, fold_recursion_);
    return *sink_;
  }
  void end_thread(const analysis::ExportThread&) {}
  // Turns the process's nodes with self time into stack strings.
  void end_process(const format::ProcessRecording& proc, analysis::ProcessSymbolizer& sym) {
    const auto& nodes = trie_.nodes();
    std::vector<uint64_t> path;
    for (uint32_t i = 1; i < nodes.size() && !error_; ++i) {
      if (nodes[i].self <= 0) continue;
      path.clear();
      for (uint32_t n = i; n != analysis::StackTrie::kRoot; n = nodes[n].parent)
        path.push_back(nodes[n].addr);
      std::string stack;
      for (auto it = path.rbegin(); it != path.rend(); ++it) {
        if (!stack.empty()) stack += ';';
        stack += frame_name(sym.lookup(*it).name);
      }
      auto added =
          stacks_.add(std::move(stack), proc.meta.ticks_to_ns(static_cast<uint64_t>(nodes[i].self)));
      if (!added) error_ = added.error();
    }
    sink_.reset();
    trie_ = analysis::StackTrie();
  }
  const std::optional<std::string>& error() const { return error_; }

 private:
  analysis::FoldedStacks& stacks_;
  bool fold_recursion_;
  analysis::StackTrie trie_;
  std::optional<analysis::StackSink> sink_;
  std::optional<std::string> error_;  // the first spill that failed
};

}  // namespace

Result<std::vector<std::string>> export_folded(const format::Recording& rec,
                                               const ExportOptions& options, std::FILE* out) {
  analysis::FoldedStacks stacks(options.folded_budget);
  FoldedVisitor visitor(stacks, options.fold_recursion);
  auto warnings = analysis::walk_recording(rec, options.compensate, options.filters, visitor);
  if (!warnings) return warnings;
  if (visitor.error()) return Error{*visitor.error()};
  ExportStream s(out);
  std::string line;
  auto written = stacks.write([&](const std::string& stack, double ns) {
    long long self = std::llround(ns);
    if (self <= 0) return;
    line.assign(stack);
    line += ' ';
    line += fmt::format_int(self).c_str();
    line += '\n';
    s.write(line);
  });
  if (!written) return Error{written.error()};
  if (!s.finish()) return Error{"cannot write the output"};
  return warnings;
}

}  // namespace callmon::report
