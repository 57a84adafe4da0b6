// run_ordered (analysis/ordered_pool.hpp): results come back in job order whatever order
// the workers finish in, errors stop the merge, exceptions reach the caller.
#include "analysis/ordered_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

using callmon::analysis::run_ordered;

namespace {

// Early jobs take longest, so later ones finish first.
int slow_square(size_t i, size_t n) {
  std::this_thread::sleep_for(std::chrono::microseconds(200 * (n - i)));
  return static_cast<int>(i * i);
}

}  // namespace

TEST(OrderedPool, ConsumesInJobOrder) {
  for (unsigned workers : {1u, 2u, 4u}) {
    const size_t n = 40;
    std::vector<size_t> order;
    std::vector<int> values;
    run_ordered<int>(
        n, workers, [&](size_t i) { return slow_square(i, n); },
        [&](size_t i, int&& v) {
          order.push_back(i);
          values.push_back(v);
          return true;
        });
    ASSERT_EQ(order.size(), n) << workers;
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(order[i], i);
      EXPECT_EQ(values[i], static_cast<int>(i * i));
    }
  }
}

TEST(OrderedPool, RunsOnSeveralThreads) {
  std::atomic<int> running{0}, most{0};
  run_ordered<int>(
      8, 2,
      [&](size_t) {
        int now = ++running;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        // Long enough for the two workers to overlap on a busy machine.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        --running;
        return 0;
      },
      [](size_t, int&&) { return true; });
  EXPECT_EQ(most.load(), 2);
}

TEST(OrderedPool, StopsWhenConsumeSaysSo) {
  for (unsigned workers : {1u, 2u}) {
    std::vector<size_t> seen;
    std::atomic<size_t> produced{0};
    run_ordered<int>(
        100, workers,
        [&](size_t) {
          ++produced;
          return 0;
        },
        [&](size_t i, int&&) {
          seen.push_back(i);
          return i < 2;
        });
    EXPECT_EQ(seen, (std::vector<size_t>{0, 1, 2})) << workers;
    // The window keeps the workers from running far ahead of the merge.
    EXPECT_LE(produced.load(), 3u + 2 * workers) << workers;
  }
}

TEST(OrderedPool, RethrowsInOrder) {
  std::vector<size_t> seen;
  EXPECT_THROW(run_ordered<int>(
                   10, 2,
                   [](size_t i) {
                     if (i == 5) throw std::runtime_error("job 5");
                     return 0;
                   },
                   [&](size_t i, int&&) {
                     seen.push_back(i);
                     return true;
                   }),
               std::runtime_error);
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1, 2, 3, 4}));
}
