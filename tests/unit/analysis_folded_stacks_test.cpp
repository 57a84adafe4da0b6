// FoldedStacks (analysis/folded_stacks.hpp): stacks summed and written in byte order, the
// same bit for bit whether they stayed in memory or were spilled to temporary files.
#include "analysis/folded_stacks.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace callmon::analysis {
namespace {

using Lines = std::vector<std::pair<std::string, double>>;

// Adds the stacks of `adds` in order with `budget` and returns what write() hands out.
Lines run(const Lines& adds, size_t budget, size_t* runs = nullptr) {
  FoldedStacks stacks(budget);
  for (const auto& [stack, ns] : adds) EXPECT_TRUE(stacks.add(stack, ns));
  Lines out;
  EXPECT_TRUE(stacks.write([&](const std::string& s, double ns) { out.emplace_back(s, ns); }));
  if (runs) *runs = stacks.runs();
  return out;
}

TEST(FoldedStacks, SumsAndSorts) {
  Lines out = run({{"main;b", 2}, {"main", 1}, {"main;a", 3}, {"main;b", 4}}, 1 << 20);
  EXPECT_EQ(out, (Lines{{"main", 1}, {"main;a", 3}, {"main;b", 6}}));
}

TEST(FoldedStacks, SpilledRunsMergeToTheSameBits) {
  // Additions whose sum depends on their order in floating point: 1e16 + 1 + 1 - 1e16 is 0
  // added left to right, 2 if the ones were summed apart first.
  Lines adds;
  for (int i = 0; i < 2000; ++i) {
    adds.emplace_back("p;" + std::to_string(i % 37) + std::string(i % 5, 'x'), 0.1 * i);
    if (i % 100 == 0) {
      adds.emplace_back("big", i == 0 ? 1e16 : 1.0);
      adds.emplace_back("big;a(int)", 1.5);  // '(' sorts before ';'
      adds.emplace_back("big(", 2.5);
    }
  }
  adds.emplace_back("big", -1e16);
  size_t runs = 0;
  Lines in_memory = run(adds, size_t{1} << 30, &runs);
  EXPECT_EQ(runs, 0u);
  Lines spilled = run(adds, 512, &runs);
  EXPECT_GT(runs, 10u);
  ASSERT_EQ(spilled.size(), in_memory.size());
  for (size_t i = 0; i < spilled.size(); ++i) {
    EXPECT_EQ(spilled[i].first, in_memory[i].first);
    EXPECT_EQ(std::memcmp(&spilled[i].second, &in_memory[i].second, sizeof(double)), 0)
        << spilled[i].first << " " << spilled[i].second << " " << in_memory[i].second;
  }
  for (size_t i = 1; i < spilled.size(); ++i) EXPECT_LT(spilled[i - 1].first, spilled[i].first);
}

TEST(FoldedStacks, Empty) {
  EXPECT_TRUE(run({}, 100).empty());
}

}  // namespace
}  // namespace callmon::analysis
