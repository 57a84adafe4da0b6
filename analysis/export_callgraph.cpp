// Caller/callee graph of the callgrind export (export_callgraph.hpp).
#include "analysis/export_callgraph.hpp"

#include "analysis/call_sites.hpp"

namespace callmon::analysis {

uint32_t CallgraphSink::on_enter(uint64_t addr, uint64_t, uint32_t depth, bool) {
  stack_.resize(depth);  // the walker's depth: frames above it have finished
  if (func_index_.try_emplace(addr, static_cast<uint32_t>(funcs_.size())).second)
    funcs_.push_back(Func{addr, 0, 0});
  uint32_t arc = kNoArc;
  if (depth > 0) {
    auto [it, inserted] =
        arc_index_.try_emplace({stack_.back(), addr}, static_cast<uint32_t>(arcs_.size()));
    if (inserted) arcs_.push_back(Arc{stack_.back(), addr, 0, 0, 0});
    arc = it->second;
    ++arcs_[arc].active;
  }
  stack_.push_back(addr);
  return arc;
}

void CallgraphSink::on_call(const FinishedCall& call) {
  if (call.slot != kNoArc) {
    Arc& a = arcs_[call.slot];
    // Only the outermost open call of the pair adds its time: the nested ones lie inside it.
    if (--a.active == 0) a.incl += call.time;
    if (!call.inherited) ++a.calls;
  }
  if (call.inherited && !call.resumed) return;
  Func& f = funcs_[func_index_.find(call.addr)->second];
  f.self += call.self;
  if (!call.inherited) ++f.calls;  // a continuation's call was counted at its ENTER
}

uint32_t CallgraphBuilder::function_of(ProcessSymbolizer& sym, uint64_t addr) {
  const SymbolInfo& s = sym.lookup(addr);
  std::string key = s.name + '\0' + s.module;
  auto [it, inserted] = func_index_.try_emplace(std::move(key), graph_.functions.size());
  if (inserted) {
    CallgraphFunction f;
    f.name = s.name;
    f.module = s.module;
    f.file = s.file;
    f.line = s.line;
    graph_.functions.push_back(std::move(f));
  }
  return it->second;
}

void CallgraphBuilder::add_process(const format::ProcessMeta& meta, ProcessSymbolizer& sym,
                                   const CallgraphSink& sink) {
  // Functions in the order they were first entered, then the arcs.
  for (const CallgraphSink::Func& f : sink.functions()) {
    CallgraphFunction& g = graph_.functions[function_of(sym, f.addr)];
    g.calls += f.calls;
    if (f.self > 0) g.self_ns += meta.ticks_to_ns(static_cast<uint64_t>(f.self));
  }
  for (const CallgraphSink::Arc& a : sink.arcs()) {
    uint32_t caller = function_of(sym, a.caller);
    uint32_t callee = function_of(sym, a.callee);
    uint64_t key = static_cast<uint64_t>(caller) << 32 | callee;
    auto [it, inserted] = arc_index_.try_emplace(key, graph_.arcs.size());
    if (inserted) graph_.arcs.push_back(CallgraphArc{caller, callee, 0, 0});
    CallgraphArc& arc = graph_.arcs[it->second];
    if (arc.call_line == 0) {
      // Both ends in one readable module: look for the call in the caller's code.
      ProcessSymbolizer::CodeRef from = sym.code_of(a.caller);
      ProcessSymbolizer::CodeRef to = sym.code_of(a.callee);
      if (from.image != nullptr && from.image == to.image)
        arc.call_line = call_site_line(*from.image, from.vaddr, to.vaddr);
    }
    arc.calls += a.calls;
    arc.incl_ns += meta.ticks_to_ns(a.incl);
  }
}

}  // namespace callmon::analysis
