// The folded export's stack sums in bounded memory (folded_stacks.hpp). A run file holds,
// per stack in byte order: u32 length, the bytes, u32 count, count doubles.
#include "analysis/folded_stacks.hpp"

#include <queue>

namespace callmon::analysis {
namespace {

// The next stack of a run and its additions; false at the run's end.
bool read_entry(std::FILE* f, std::string& stack, std::vector<double>& adds, bool& bad) {
  uint32_t len;
  if (std::fread(&len, sizeof len, 1, f) != 1) return false;
  stack.resize(len);
  uint32_t count = 0;
  if ((len && std::fread(stack.data(), 1, len, f) != len) ||
      std::fread(&count, sizeof count, 1, f) != 1) {
    bad = true;
    return false;
  }
  adds.resize(count);
  if (count && std::fread(adds.data(), sizeof(double), count, f) != count) {
    bad = true;
    return false;
  }
  return true;
}

}  // namespace

FoldedStacks::~FoldedStacks() {
  for (std::FILE* f : runs_) std::fclose(f);
}

Result<bool> FoldedStacks::add(std::string stack, double ns) {
  // A map node, the string's heap block and the vector's: about 96 bytes beside the text.
  auto [it, inserted] = stacks_.try_emplace(std::move(stack));
  if (inserted) held_ += it->first.size() + 96;
  it->second.push_back(ns);
  held_ += sizeof(double);
  if (held_ > budget_) return spill();
  return true;
}

Result<bool> FoldedStacks::spill() {
  std::FILE* f = std::tmpfile();
  if (!f) return Error{"cannot make a temporary file for the folded stacks"};
  runs_.push_back(f);
  for (const auto& [stack, adds] : stacks_) {
    auto len = static_cast<uint32_t>(stack.size());
    auto count = static_cast<uint32_t>(adds.size());
    std::fwrite(&len, sizeof len, 1, f);
    std::fwrite(stack.data(), 1, len, f);
    std::fwrite(&count, sizeof count, 1, f);
    std::fwrite(adds.data(), sizeof(double), count, f);
  }
  if (std::fflush(f) != 0 || std::ferror(f))
    return Error{"cannot write the folded stacks' temporary file"};
  stacks_.clear();
  held_ = 0;
  return true;
}

Result<bool> FoldedStacks::write(const std::function<void(const std::string&, double)>& out) {
  if (runs_.empty()) {  // all in memory: no merge
    for (const auto& [stack, adds] : stacks_) {
      double sum = 0;
      for (double a : adds) sum += a;
      out(stack, sum);
    }
    stacks_.clear();
    return true;
  }
  auto spilled = spill();
  if (!spilled) return spilled;
  // One head per run; ties go to the earlier run first, so additions keep their order.
  struct Head {
    std::string stack;
    std::vector<double> adds;
  };
  std::vector<Head> heads(runs_.size());
  auto later = [&](size_t a, size_t b) {
    int c = heads[a].stack.compare(heads[b].stack);
    return c != 0 ? c > 0 : a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> queue(later);
  bool bad = false;
  for (size_t r = 0; r < runs_.size(); ++r) {
    std::rewind(runs_[r]);
    if (read_entry(runs_[r], heads[r].stack, heads[r].adds, bad)) queue.push(r);
  }
  std::string stack;
  while (!queue.empty() && !bad) {
    stack = heads[queue.top()].stack;
    double sum = 0;
    while (!queue.empty() && heads[queue.top()].stack == stack) {
      size_t r = queue.top();
      queue.pop();
      for (double a : heads[r].adds) sum += a;
      if (read_entry(runs_[r], heads[r].stack, heads[r].adds, bad)) queue.push(r);
    }
    out(stack, sum);
  }
  if (bad) return Error{"cannot read back the folded stacks' temporary file"};
  return true;
}

}  // namespace callmon::analysis
