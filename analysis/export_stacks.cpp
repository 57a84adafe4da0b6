// The stack trie of the folded export (export_stacks.hpp).
#include "analysis/export_stacks.hpp"

namespace callmon::analysis {

uint32_t StackTrie::child(uint32_t parent, uint64_t addr) {
  auto [it, inserted] = index_.try_emplace({parent, addr}, static_cast<uint32_t>(nodes_.size()));
  if (inserted) nodes_.push_back(Node{parent, addr, 0});
  return it->second;
}

}  // namespace callmon::analysis
