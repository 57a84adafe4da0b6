// Self time per distinct call stack, for the folded ("collapsed stack") export. A trie of
// stacks keeps one node per distinct (parent stack, function address) of a process, so
// memory grows with the distinct stacks, never with the number of calls. The threads of a
// process share one trie (their stacks merge). Recursion may be folded (StackSink).
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
// calls below them but add no self time, as in `callmon report`. A continuation (a call a
// ucontext switch suspended, taken up again: FinishedCall::resumed) is the same call on
// the same stack: its self time adds to that stack's node, as report adds it to the call.
// With `fold_recursion`, a call of a function (an address) already open on the stack,
// directly or through others, takes the node of its first occurrence: a;b;a;c counts as
// a;c, and its self time goes to that node, as flame graph users expect of recursion.
class StackSink {
 public:
  explicit StackSink(StackTrie& trie, bool fold_recursion = false)
      : trie_(trie), fold_(fold_recursion) {}

  uint32_t on_enter(uint64_t addr, uint64_t, uint32_t depth, bool) {
    while (stack_.size() > depth) pop();  // the walker's depth: frames above it finished
    const uint32_t parent = depth == 0 ? StackTrie::kRoot : stack_.back().node;
    if (fold_) {
      auto [it, first] = open_.try_emplace(addr, parent);
      if (!first) {  // already open below: its first occurrence's node
        stack_.push_back({it->second, addr, false});
        return it->second;
      }
      uint32_t node = trie_.child(parent, addr);
      it->second = node;
      stack_.push_back({node, addr, true});
      return node;
    }
    uint32_t node = trie_.child(parent, addr);
    stack_.push_back({node, addr, false});
    return node;
  }
  void on_call(const FinishedCall& call) {
    if (!call.inherited || call.resumed) trie_.add_self(call.slot, call.self);
  }
  void on_special(const format::Event&, uint32_t) {}

 private:
  struct Open {
    uint32_t node;
    uint64_t addr;
    bool first;  // the function's first occurrence on the stack (fold_recursion)
  };
  void pop() {
    if (stack_.back().first) open_.erase(stack_.back().addr);
    stack_.pop_back();
  }

  StackTrie& trie_;
  bool fold_;
  std::vector<Open> stack_;  // each open call
  std::unordered_map<uint64_t, uint32_t> open_;  // fold_recursion: address -> first node
};

}  // namespace callmon::analysis
