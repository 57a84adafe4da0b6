// Self time per folded stack string ("f1;f2;f3"), summed over processes and threads and
// written in sorted order, in bounded memory: once the stacks held pass a budget they are
// spilled, sorted, to an anonymous temporary file, and the runs are merged at the end (an
// external merge sort). A 10^7-call recording with deep recursion and long C++ names makes
// gigabytes of stack strings; without spilling they were all held at once.
//
// The sums are those of a single in-memory map, bit for bit: a run keeps every addition
// to a stack, not its partial sum, and the merge adds them up in the order they came.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "format/result.hpp"

namespace callmon::analysis {

class FoldedStacks {
 public:
  // `budget`: bytes of stacks (strings and their figures, roughly) held before a spill.
  explicit FoldedStacks(size_t budget = size_t{64} << 20) : budget_(budget) {}
  ~FoldedStacks();
  FoldedStacks(const FoldedStacks&) = delete;
  FoldedStacks& operator=(const FoldedStacks&) = delete;

  // Adds `ns` to `stack`. Error: a temporary file cannot be made or written.
  Result<bool> add(std::string stack, double ns);

  // Calls out(stack, summed ns) for every stack in byte order, once each. Call once, after
  // the last add(). Error: a spilled run cannot be read back.
  Result<bool> write(const std::function<void(const std::string&, double)>& out);

  size_t runs() const { return runs_.size(); }  // spilled runs so far (tests)

 private:
  Result<bool> spill();

  size_t budget_;
  size_t held_ = 0;
  std::map<std::string, std::vector<double>> stacks_;
  std::vector<std::FILE*> runs_;
};

}  // namespace callmon::analysis
