// Self time per distinct call stack, for the folded ("collapsed stack") export. A trie of
// stacks keeps one node per distinct (parent stack, function address) of a process, so
// memory grows with the distinct stacks, never with the number of calls. The threads of a
// process share one trie (their stacks merge).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "analysis/call_walk.hpp"

namespace callmon::analysis {

class StackTrie {
 public:
  static constexpr uint32_t kRoot = 0;  // the empty stack

  struct Node {
    uint32_t parent = kRoot;
    uint64_t addr = 0;
    int64_t self = 0;  // summed self ticks of the calls with exactly this stack
  };

  StackTrie() { nodes_.push_back(Node{}); }

  // The node of stack `parent` + `addr`, made on first use.
  uint32_t child(uint32_t parent, uint64_t addr);
  void add_self(uint32_t node, int64_t ticks) { nodes_[node].self += ticks; }
  // Every node; a node's parent always comes before it. Index 0 is the root.
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  struct KeyHash {
    size_t operator()(const std::pair<uint32_t, uint64_t>& k) const {
      return std::hash<uint64_t>()(k.second * 0x9E3779B97F4A7C15ull ^ k.first);
    }
  };
  std::vector<Node> nodes_;
  std::unordered_map<std::pair<uint32_t, uint64_t>, uint32_t, KeyHash> index_;
};

// Call-walk sink of one thread: adds every call's self time to the node of its stack.
// Inherited frames (a fork child's calls begun in the parent) stay in the stacks of the
// calls below them but add no self time, as in `callmon report`.
class StackSink {
 public:
  explicit StackSink(StackTrie& trie) : trie_(trie) {}

  uint32_t on_enter(uint64_t addr, uint64_t, uint32_t depth, bool) {
    stack_.resize(depth);  // the walker's depth: frames above it have finished
    uint32_t node = trie_.child(depth == 0 ? StackTrie::kRoot : stack_.back(), addr);
    stack_.push_back(node);
    return node;
  }
  void on_call(const FinishedCall& call) {
    if (!call.inherited) trie_.add_self(call.slot, call.self);
  }
  void on_special(const format::Event&, uint32_t) {}

 private:
  StackTrie& trie_;
  std::vector<uint32_t> stack_;  // trie node of each open call
};

}  // namespace callmon::analysis
