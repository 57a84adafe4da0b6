// The caller/callee graph of the callgrind export: per function its calls and self time,
// per (caller, callee) pair the number of calls and their inclusive time. Memory grows with
// the distinct functions and pairs, never with the number of calls.
//
// Recursion: a pair's inclusive time adds a call's time only when no other call of the same
// pair is open below it on the stack, so a call nested inside another activation of the same
// caller->callee arc (fact->fact->fact) is not counted twice; its calls are still counted.
// Functions merge by (name, module) across processes and threads, as in `callmon report`,
// and inherited frames (begun in a fork's parent) add no calls and no self time there.
// A continuation (a call a ucontext switch suspended, taken up again) adds its self time to
// its function and its time to its arc, no call: as report counts it.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/call_walk.hpp"
#include "analysis/symbolizer.hpp"
#include "format/process_meta.hpp"

namespace callmon::analysis {

// Call-walk sink for the threads of one process (walked one after the other).
class CallgraphSink {
 public:
  struct Func {
    uint64_t addr = 0;
    int64_t self = 0;  // ticks
    uint64_t calls = 0;
  };
  struct Arc {
    uint64_t caller = 0;
    uint64_t callee = 0;
    uint64_t calls = 0;
    uint64_t incl = 0;    // ticks, outermost activations of the pair only
    uint32_t active = 0;  // calls of the pair open now
  };
  static constexpr uint32_t kNoArc = UINT32_MAX;

  uint32_t on_enter(uint64_t addr, uint64_t, uint32_t depth, bool);
  void on_call(const FinishedCall& call);
  void on_special(const format::Event&, uint32_t) {}

  // In the order they were first entered.
  const std::vector<Func>& functions() const { return funcs_; }
  const std::vector<Arc>& arcs() const { return arcs_; }

 private:
  struct PairHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.first * 0x9E3779B97F4A7C15ull ^ k.second);
    }
  };
  std::vector<uint64_t> stack_;  // addresses of the open calls
  std::vector<Func> funcs_;
  std::unordered_map<uint64_t, uint32_t> func_index_;
  std::vector<Arc> arcs_;
  std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, PairHash> arc_index_;
};

struct CallgraphFunction {
  std::string name;
  std::string module;
  std::string file;  // empty when unknown
  uint32_t line = 0;
  uint64_t calls = 0;
  double self_ns = 0;  // never negative (a compensated self below zero counts 0)
};

struct CallgraphArc {
  uint32_t caller = 0;  // indexes into Callgraph::functions
  uint32_t callee = 0;
  uint64_t calls = 0;
  double incl_ns = 0;
  uint32_t call_line = 0;  // the caller's line that calls the callee (call_sites.hpp), 0 if unknown
};

struct Callgraph {
  std::vector<CallgraphFunction> functions;  // in first-seen order
  std::vector<CallgraphArc> arcs;            // in first-seen order
};

// Merges the sinks of every process into one graph.
class CallgraphBuilder {
 public:
  void add_process(const format::ProcessMeta& meta, ProcessSymbolizer& sym,
                   const CallgraphSink& sink);
  Callgraph take() { return std::move(graph_); }

 private:
  uint32_t function_of(ProcessSymbolizer& sym, uint64_t addr);

  Callgraph graph_;
  std::unordered_map<std::string, uint32_t> func_index_;  // name '\0' module
  std::unordered_map<uint64_t, uint32_t> arc_index_;      // caller << 32 | callee
};

}  // namespace callmon::analysis
