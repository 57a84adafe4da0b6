// The call graph and the calling-context tree of a recording (`callmon graph`).
// GraphSink gathers, while the call walk runs, per-address function counters, per-arc
// (caller, callee) counters and the calling-context tree of one process in ticks; memory
// grows with the distinct arcs and contexts, never with the calls. build_graph() walks
// every thread, then symbolizes the distinct addresses and merges functions by
// (demangled name, module path), as the flat profile does.
//
// Recursion rule (docs/graph.md): a function's total, and an arc's time, count only the
// outermost activation open on the stack: for an arc (caller, callee), a call along that
// arc nested inside another open call along the same arc adds its count and its self time
// but not its inclusive time, so a recursive arc f->f is listed with every call and the
// time of its outermost activation only.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/addr_index.hpp"
#include "analysis/call_walk.hpp"
#include "analysis/filters.hpp"
#include "analysis/thread_problems.hpp"
#include "analysis/timeline.hpp"
#include "format/recording.hpp"
#include "format/result.hpp"

namespace callmon::analysis {

inline constexpr uint32_t kGraphRoot = UINT32_MAX;  // the caller of outermost calls

// Bounds of a summed figure in ticks (FinishedCall's ranges, added up).
struct TicksRange {
  uint64_t lo = 0, hi = 0;
  void add(uint64_t l, uint64_t h) { lo += l, hi += h; }
};
// The same in nanoseconds.
struct NsRange {
  double lo = 0, hi = 0;
};

// One process's graph in ticks, indexed by function slot (distinct address).
class GraphSink {
 public:
  struct Func {
    uint64_t addr = 0;
    uint64_t calls = 0;
    uint64_t total = 0;  // outermost activations only
    int64_t self = 0;
    uint32_t active = 0;
    TicksRange total_range, self_range;  // FinishedCall's time_lo/hi, self_lo/hi summed
    uint64_t preempted = 0;  // outermost activations, as total (FinishedCall::preempted)
    uint64_t offcpu = 0;     // blocked time inside total (outermost activations)
    uint64_t clocked = 0;    // calls that read a clock (FinishedCall::clocked)
  };
  struct Arc {
    uint32_t caller = kGraphRoot;  // function slot or kGraphRoot
    uint32_t callee = 0;
    uint64_t calls = 0;
    uint64_t time = 0;  // inclusive, outermost activation of this arc only
    int64_t self = 0;
    uint32_t active = 0;
    TicksRange time_range, self_range;
  };
  struct Node {  // a calling context; node 0 is the root above every thread's first call
    uint32_t parent = 0;
    uint32_t func = 0;
    uint64_t calls = 0;
    uint64_t time = 0;
    int64_t self = 0;
    TicksRange time_range, self_range;
    uint64_t offcpu = 0;  // blocked time inside time
  };

  GraphSink() { nodes_.push_back(Node{}); }

  uint32_t on_enter(uint64_t addr, uint64_t ticks, uint32_t depth, bool inherited);
  void on_call(const FinishedCall& call);
  void on_special(const format::Event& ev, uint32_t /*depth*/) {
    if (ev.type == format::Event::kLost) lost_ += ev.count;
  }

  const std::vector<Func>& functions() const { return funcs_; }
  const std::vector<Arc>& arcs() const { return arcs_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  uint64_t calls() const { return calls_; }
  uint64_t lost_events() const { return lost_; }
  void reset_counts() { calls_ = 0; lost_ = 0; }  // between threads

 private:
  struct Frame {
    uint32_t func;
    uint32_t arc;
    uint32_t node;
  };
  static uint64_t pair_key(uint32_t a, uint32_t b) { return (uint64_t{a} << 32) | b; }

  AddrIndex index_;
  std::vector<Func> funcs_;
  // The arcs and contexts by pair_key, in the flat table the functions use (any 64-bit key
  // does; the indices are given in order of first sight whatever the table, so the graph is
  // the same): two std::unordered_map lookups per call, a division and a node each, were a
  // fifth of html's walk on SQLite.
  AddrIndex arc_index_;
  std::vector<Arc> arcs_;
  AddrIndex node_index_;
  std::vector<Node> nodes_;
  std::vector<Frame> frames_;
  uint64_t calls_ = 0;
  uint64_t lost_ = 0;
};

// The symbolized graph of a whole recording, in nanoseconds.
struct GraphFunction {
  std::string name;
  std::string module;
  std::string file;   // source file of the function's start (DWARF), empty if unknown
  uint32_t line = 0;  // 0 if unknown
  uint64_t calls = 0;
  double total_ns = 0;
  double self_ns = 0;
  NsRange total_range, self_range;  // bounds holding the true figures (figure_range.hpp)
  double preempted_ns = 0;     // time its thread was preempted, taken out of total_ns
  double offcpu_ns = 0;        // time its thread was blocked, inside total_ns
  uint64_t clocked_calls = 0;  // calls that read a clock (as FunctionRow's)
};

struct GraphArc {
  uint32_t caller = kGraphRoot;  // index into CallGraph::functions, or kGraphRoot
  uint32_t callee = 0;
  uint64_t calls = 0;
  double time_ns = 0;  // callee's inclusive time along this arc (outermost activation)
  double self_ns = 0;  // callee's self time along this arc
  NsRange time_range, self_range;
};

struct ContextNode {
  uint32_t func = 0;    // index into CallGraph::functions (unused for the root)
  uint32_t parent = 0;  // node index; the root (0) is its own parent
  uint64_t calls = 0;
  double time_ns = 0;
  double self_ns = 0;
  std::vector<uint32_t> children;
  NsRange time_range, self_range;
  double offcpu_ns = 0;  // time its thread was blocked, inside time_ns
};

// One thread seen on its own (GraphOptions::threads): its calling-context tree and its
// calls in time order, bounded (timeline.hpp); function indices are CallGraph's.
struct TimelineEntry {
  double start_ns = 0, end_ns = 0;  // on the thread's compensated clock
  uint32_t depth = 0;
  int64_t func = -1;    // index into CallGraph::functions, -1 for merged calls of several
  uint64_t count = 1;   // calls it stands for
  double busy_ns = 0;   // the calls' own inclusive times, summed
  // Pieces of calls it stands for (>= count: continuations and inherited frames are no
  // calls) and what they were (TimelineMark bits, timeline.hpp); 1 and 0 for one call.
  uint64_t pieces = 1;
  uint8_t marks = 0;
};
struct ThreadView {
  uint32_t pid = 0, tid = 0;
  std::string name;  // from the thread's header, may be empty
  uint64_t calls = 0;
  std::vector<ContextNode> contexts;  // [0] is the root, as CallGraph::contexts
  std::vector<TimelineEntry> timeline;  // sorted by start, then depth
  double merged_below_ns = 0;  // calls shorter than this were merged (timeline.hpp)
};

struct CallGraph {
  std::string recording;
  uint64_t total_calls = 0;
  size_t processes = 0;
  size_t threads = 0;
  std::vector<GraphFunction> functions;
  std::vector<GraphArc> arcs;
  std::vector<ContextNode> contexts;  // [0] is the root; filled only with `tree`
  std::vector<ThreadView> thread_views;  // filled only with GraphOptions::threads
  std::vector<std::string> warnings;
};

struct GraphOptions {
  bool compensate = true;
  bool tree = false;             // build the calling-context tree too
  bool threads = false;          // and each thread's own tree and time-ordered calls
  size_t timeline_budget = 200000;  // time-ordered boxes kept, all threads together
  const FilterSet* filters = nullptr;  // may be null
  ProgressFn progress;           // may be empty
};

// Walks every thread file of `rec`. Errors: a thread file that cannot be opened.
Result<CallGraph> build_graph(const format::Recording& rec, const GraphOptions& options);

}  // namespace callmon::analysis
