// Call graph and calling-context tree of a whole recording (graph.hpp): the GraphSink's
// per-event work, then per process the symbolization of the distinct addresses and the
// merge into one graph keyed by (name, module).
#include "analysis/graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "analysis/compensation.hpp"
#include "analysis/figure_range.hpp"
#include "analysis/symbolizer.hpp"

namespace callmon::analysis {

uint32_t GraphSink::on_enter(uint64_t addr, uint64_t /*ticks*/, uint32_t /*depth*/,
                             bool inherited) {
  bool inserted;
  uint32_t func = index_.find_or_insert(addr, static_cast<uint32_t>(funcs_.size()), inserted);
  if (inserted) {
    funcs_.emplace_back();
    funcs_.back().addr = addr;
  }
  uint32_t caller = frames_.empty() ? kGraphRoot : frames_.back().func;
  uint32_t parent = frames_.empty() ? 0 : frames_.back().node;
  bool new_arc;
  const uint32_t arc = arc_index_.find_or_insert(pair_key(caller, func),
                                                 static_cast<uint32_t>(arcs_.size()), new_arc);
  if (new_arc) {
    arcs_.emplace_back();
    arcs_.back().caller = caller;
    arcs_.back().callee = func;
  }
  bool new_node;
  const uint32_t node = node_index_.find_or_insert(pair_key(parent, func),
                                                   static_cast<uint32_t>(nodes_.size()), new_node);
  if (new_node) nodes_.push_back(Node{parent, func, 0, 0, 0, {}, {}});
  if (!inherited) {
    ++funcs_[func].active;
    ++arcs_[arc].active;
  }
  frames_.push_back(Frame{func, arc, node});
  return func;
}

void GraphSink::on_call(const FinishedCall& call) {
  Frame fr = frames_.back();
  frames_.pop_back();
  // Inherited frames are calls of the parent process, counted there. A continuation (a call
  // a ucontext switch suspended, taken up again: FinishedCall::resumed) adds its time to its
  // call's function, arc and context, no count, as report does (flat_profile.hpp): its piece
  // was no activation (on_enter), so it adds to a total unless an activation is open around.
  if (call.inherited && !call.resumed) return;
  const bool counted = !call.inherited;
  calls_ += counted;
  Func& f = funcs_[fr.func];
  f.calls += counted;
  if (counted ? --f.active == 0 : f.active == 0) {
    f.total += call.time;
    f.total_range.add(call.time_lo, call.time_hi);
    f.preempted += call.preempted;
    f.offcpu += call.offcpu;
  }
  f.clocked += counted && call.clocked;
  f.self += call.self;
  f.self_range.add(call.self_lo, call.self_hi);
  Arc& a = arcs_[fr.arc];
  a.calls += counted;
  if (counted ? --a.active == 0 : a.active == 0) {  // outermost activation of this arc only
    a.time += call.time;
    a.time_range.add(call.time_lo, call.time_hi);
  }
  a.self += call.self;
  a.self_range.add(call.self_lo, call.self_hi);
  Node& n = nodes_[fr.node];
  n.calls += counted;
  n.time += call.time;  // a context cannot be open twice: no recursion to correct for
  n.self += call.self;
  n.time_range.add(call.time_lo, call.time_hi);
  n.self_range.add(call.self_lo, call.self_hi);
  n.offcpu += call.offcpu;
}

namespace {

// One process's tick figures as the graph adds them up, in ns.
struct NsFigures {
  const format::ProcessMeta& meta;
  double ns(uint64_t ticks) const { return meta.ticks_to_ns(ticks); }
  double self_ns(int64_t self, uint64_t total) const { return ns(clamped_self(self, total)); }
  // A figure's bounds, and a self time's bounded by its total's, as report's rows are.
  void add_ranges(NsRange& total, NsRange& self, const TicksRange& t, const TicksRange& s) const {
    const SummedBounds b = bound_self_by_total({t.lo, t.hi, s.lo, s.hi});
    total.lo += ns(b.total_lo);
    total.hi += ns(b.total_hi);
    self.lo += ns(b.self_lo);
    self.hi += ns(b.self_hi);
  }
};

// Function, arc and context tables of the whole recording, keyed by name and module.
class GraphMerger {
 public:
  explicit GraphMerger(CallGraph& g) : g_(g) {
    if (g_.contexts.empty()) g_.contexts.emplace_back();
  }

  void add_process(const GraphSink& sink, const format::ProcessMeta& meta,
                   ProcessSymbolizer& sym, bool tree) {
    const NsFigures fig{meta};
    std::vector<uint32_t> ids;
    for (const GraphSink::Func& f : sink.functions()) {
      uint32_t id = function_id(sym.lookup(f.addr));
      ids.push_back(id);
      GraphFunction& gf = g_.functions[id];
      gf.calls += f.calls;
      gf.total_ns += fig.ns(f.total);
      gf.self_ns += fig.self_ns(f.self, f.total);
      fig.add_ranges(gf.total_range, gf.self_range, f.total_range, f.self_range);
      gf.preempted_ns += fig.ns(f.preempted);
      gf.offcpu_ns += fig.ns(f.offcpu);
      gf.clocked_calls += f.clocked;
    }
    for (const GraphSink::Arc& a : sink.arcs()) {
      if (a.calls == 0) continue;  // inherited only
      uint32_t caller = a.caller == kGraphRoot ? kGraphRoot : ids[a.caller];
      uint64_t key = (uint64_t{caller} << 32) | ids[a.callee];
      auto [it, inserted] = arc_index_.try_emplace(key, static_cast<uint32_t>(g_.arcs.size()));
      if (inserted) g_.arcs.push_back(GraphArc{caller, ids[a.callee], 0, 0, 0, {}, {}});
      GraphArc& ga = g_.arcs[it->second];
      ga.calls += a.calls;
      ga.time_ns += fig.ns(a.time);
      ga.self_ns += fig.self_ns(a.self, a.time);
      fig.add_ranges(ga.time_range, ga.self_range, a.time_range, a.self_range);
    }
    if (!tree) return;
    merge_tree(sink, meta, ids, g_.contexts, node_index_);
  }

  // One thread's own tree and time-ordered boxes (GraphOptions::threads), with the
  // function indices of the whole graph. Called after add_process for the thread's process
  // so that the functions keep the order they have without it.
  void add_thread(const GraphSink& sink, std::vector<TimelineBox> boxes,
                  const format::ProcessMeta& meta, ProcessSymbolizer& sym, ThreadView& view) {
    std::vector<uint32_t> ids;
    for (const GraphSink::Func& f : sink.functions()) ids.push_back(function_id(sym.lookup(f.addr)));
    view.contexts.emplace_back();
    std::unordered_map<uint64_t, uint32_t> index;
    merge_tree(sink, meta, ids, view.contexts, index);
    std::unordered_map<uint64_t, uint32_t> by_addr;
    view.timeline.reserve(boxes.size());
    for (const TimelineBox& b : boxes) {
      auto [it, inserted] = by_addr.try_emplace(b.addr, 0);
      if (inserted) it->second = function_id(sym.lookup(b.addr));
      view.timeline.push_back(TimelineEntry{b.start_ns, b.end_ns, b.depth,
                                            b.mixed ? -1 : int64_t{it->second},
                                            b.count - b.not_calls, b.busy_ns, b.count,
                                            b.marks});
    }
  }

 private:
  // Adds the context tree of `sink` (function slots mapped by `ids`) into `contexts`.
  void merge_tree(const GraphSink& sink, const format::ProcessMeta& meta,
                  const std::vector<uint32_t>& ids, std::vector<ContextNode>& contexts,
                  std::unordered_map<uint64_t, uint32_t>& node_index) {
    const NsFigures fig{meta};
    // Nodes come after their parents in the sink, so one pass maps them all.
    const auto& nodes = sink.nodes();
    std::vector<uint32_t> map(nodes.size(), 0);
    for (size_t i = 1; i < nodes.size(); ++i) {
      const GraphSink::Node& n = nodes[i];
      uint32_t parent = map[n.parent];
      uint32_t func = ids[n.func];
      uint64_t key = (uint64_t{parent} << 32) | func;
      auto [it, inserted] =
          node_index.try_emplace(key, static_cast<uint32_t>(contexts.size()));
      if (inserted) {
        ContextNode c;
        c.func = func;
        c.parent = parent;
        contexts.push_back(std::move(c));
        contexts[parent].children.push_back(it->second);
      }
      map[i] = it->second;
      ContextNode& c = contexts[it->second];
      c.calls += n.calls;
      c.time_ns += fig.ns(n.time);
      c.self_ns += fig.self_ns(n.self, n.time);
      fig.add_ranges(c.time_range, c.self_range, n.time_range, n.self_range);
      c.offcpu_ns += fig.ns(n.offcpu);
    }
  }

  uint32_t function_id(const SymbolInfo& s) {
    auto [it, inserted] =
        func_index_.try_emplace(s.name + '\0' + s.module, static_cast<uint32_t>(g_.functions.size()));
    if (inserted)
      g_.functions.push_back(GraphFunction{s.name, s.module, s.file, s.line, 0, 0, 0, {}, {}, 0, 0, 0});
    return it->second;
  }

  CallGraph& g_;
  std::unordered_map<std::string, uint32_t> func_index_;
  std::unordered_map<uint64_t, uint32_t> arc_index_;
  std::unordered_map<uint64_t, uint32_t> node_index_;
};

// Feeds one thread's calls to the process's graph, the thread's own graph and its timeline.
// `thread` is null when the process has one thread: its graph is the process's then.
struct ThreadTee {
  GraphSink& process;
  GraphSink* thread;
  TimelineSink& timeline;
  uint32_t on_enter(uint64_t addr, uint64_t ticks, uint32_t depth, bool inherited) {
    if (thread) thread->on_enter(addr, ticks, depth, inherited);
    timeline.on_enter(addr, ticks, depth, inherited);
    return process.on_enter(addr, ticks, depth, inherited);
  }
  void on_call(const FinishedCall& call) {
    process.on_call(call);
    if (thread) thread->on_call(call);
    timeline.on_call(call);
  }
  void on_special(const format::Event& ev, uint32_t depth) {
    process.on_special(ev, depth);
    if (thread) thread->on_special(ev, depth);
  }
};

}  // namespace

Result<CallGraph> build_graph(const format::Recording& rec, const GraphOptions& options) {
  CallGraph graph;
  graph.recording = rec.dir;
  graph.processes = rec.processes.size();
  graph.warnings = rec.warnings;
  GraphMerger merger(graph);
  static const FilterSet kNoFilters;

  std::vector<std::string> paths;
  for (const auto& p : rec.processes)
    for (const auto& t : p.threads) paths.push_back(t.path);
  uint64_t total_bytes = options.progress ? total_file_size(paths) : 0;
  uint64_t done_bytes = 0;

  // The time-ordered boxes' budget is shared by the threads, a few thousand each at least.
  size_t kept_threads = 0;
  for (const auto& p : rec.processes)
    for (const auto& t : p.threads) kept_threads += !options.filters || options.filters->keeps_thread(t.tid);
  const size_t thread_budget =
      std::max<size_t>(2000, options.timeline_budget / std::max<size_t>(1, kept_threads));

  auto cache = make_elf_cache();
  for (const format::ProcessRecording& proc : rec.processes) {
    ProcessSymbolizer sym(proc.meta, cache);
    NameDecider names(options.filters ? *options.filters : kNoFilters, sym);
    GraphSink sink;
    struct PendingThread {
      std::unique_ptr<GraphSink> graph;
      std::vector<TimelineBox> boxes;
      ThreadView view;
    };
    std::vector<PendingThread> pending;
    size_t process_threads = 0;
    for (const format::ThreadFile& tf : proc.threads)
      process_threads += !options.filters || options.filters->keeps_thread(tf.tid);
    format::ModuleLifetimes lifetimes(proc.meta.modules);
    for (const format::ThreadFile& tf : proc.threads) {
      if (options.filters && !options.filters->keeps_thread(tf.tid)) continue;
      auto opened = format::ThreadReader::open(tf.path);
      if (!opened) return Error{opened.error()};
      format::ThreadReader& reader = opened.value();
      reader.use_module_lifetimes(lifetimes);
      sink.reset_counts();
      auto progress = [&](uint64_t bytes) {
        if (options.progress) options.progress(done_bytes + bytes, total_bytes);
      };
      if (options.threads) {
        // A process's only thread has the process's graph: no second one to build.
        PendingThread t{process_threads > 1 ? std::make_unique<GraphSink>() : nullptr, {}, {}};
        TimelineSink timeline(proc.meta, thread_budget);
        // The time line stays on the walk's thread: built beside it (offload_sink.hpp) it
        // cost 40% more CPU for the same wall time on SQLite's 110.9 M calls, and more
        // wall time on a busy machine (docs/html.md).
        ThreadTee tee{sink, t.graph.get(), timeline};
        walk_filtered(reader, tee, options.filters, &names, proc, tf, options.compensate,
                      progress);
        t.boxes = timeline.finish(t.view.merged_below_ns);
        t.view.pid = proc.meta.pid;
        t.view.tid = tf.tid;
        const auto& name = reader.header().thread_name;
        t.view.name.assign(name, strnlen(name, sizeof(name)));
        t.view.calls = t.graph ? t.graph->calls() : sink.calls();
        pending.push_back(std::move(t));
      } else {
        walk_filtered(reader, sink, options.filters, &names, proc, tf, options.compensate,
                      progress);
      }
      done_bytes += reader.file_size();
      ++graph.threads;
      graph.total_calls += sink.calls();
      add_thread_warnings(reader, sink.calls(), sink.lost_events(), graph.warnings);
    }
    merger.add_process(sink, proc.meta, sym, options.tree);
    for (PendingThread& t : pending) {
      merger.add_thread(t.graph ? *t.graph : sink, std::move(t.boxes), proc.meta, sym, t.view);
      graph.thread_views.push_back(std::move(t.view));
    }
    for (const std::string& w : sym.warnings()) graph.warnings.push_back(w);
  }
  if (!options.tree) graph.contexts.clear();
  return graph;
}

}  // namespace callmon::analysis
