// Folded ("collapsed stack") export (report/export.hpp): one line "f1;f2;f3 SELF_NS" per
// distinct stack, outermost frame first, with the summed self time of the calls that had
// exactly that stack (self, never inclusive: flame graph tools add the children up
// themselves). Threads and processes merge: equal stacks add up. ';' inside a name would
// split the frame and becomes ':'. Lines are sorted; stacks whose self time rounds to
// zero (or is negative under compensation) are left out.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "analysis/export_stacks.hpp"
#include "analysis/export_walk.hpp"
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
  void begin_process(const format::ProcessRecording&, analysis::ProcessSymbolizer&) {
    trie_ = analysis::StackTrie();
  }
  analysis::StackSink& begin_thread(const analysis::ExportThread&) {
    sink_.emplace(trie_);
    return *sink_;
  }
  void end_thread(const analysis::ExportThread&) {}
  // Turns the process's nodes with self time into stack strings.
  void end_process(const format::ProcessRecording& proc, analysis::ProcessSymbolizer& sym) {
    const auto& nodes = trie_.nodes();
    std::vector<uint64_t> path;
    for (uint32_t i = 1; i < nodes.size(); ++i) {
      if (nodes[i].self <= 0) continue;
      path.clear();
      for (uint32_t n = i; n != analysis::StackTrie::kRoot; n = nodes[n].parent)
        path.push_back(nodes[n].addr);
      std::string stack;
      for (auto it = path.rbegin(); it != path.rend(); ++it) {
        if (!stack.empty()) stack += ';';
        stack += frame_name(sym.lookup(*it).name);
      }
      stacks_[stack] += proc.meta.ticks_to_ns(static_cast<uint64_t>(nodes[i].self));
    }
    sink_.reset();
    trie_ = analysis::StackTrie();
  }
  const std::map<std::string, double>& stacks() const { return stacks_; }

 private:
  analysis::StackTrie trie_;
  std::optional<analysis::StackSink> sink_;
  std::map<std::string, double> stacks_;  // stack -> self ns, whole recording
};

}  // namespace

Result<std::vector<std::string>> export_folded(const format::Recording& rec,
                                               const ExportOptions& options, std::FILE* out) {
  FoldedVisitor visitor;
  auto warnings = analysis::walk_recording(rec, options.compensate, options.filters, visitor);
  if (!warnings) return warnings;
  ExportStream s(out);
  for (const auto& [stack, ns] : visitor.stacks()) {
    long long self = std::llround(ns);
    if (self > 0) s.write(fmt::format("{} {}\n", stack, self));
  }
  if (!s.finish()) return Error{"cannot write the output"};
  return warnings;
}

}  // namespace callmon::report
