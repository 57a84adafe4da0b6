// The record-time filters' fast-path decisions (runtime/hooks/hooks.hpp, filter_fast_entry
// and filter_fast_exit): which entries and exits the probes' fast paths may take under
// --max-depth and the name filter, and which they must leave to the slow paths (pending
// counts to write first, a return value to capture, a lookup the cache cannot answer, the
// duration filter, any other guard bit).
#include <gtest/gtest.h>

#include <map>

#include "runtime/hooks/hooks.hpp"

namespace callmon::rt {
// The name filter's cache, as the test sets it: address -> decision; absent: a miss.
std::map<uintptr_t, int> g_test_cache;
int function_selected_cached(uintptr_t fn) {
  auto it = g_test_cache.find(fn);
  return it == g_test_cache.end() ? -1 : it->second;
}
}  // namespace callmon::rt

namespace {

using namespace callmon::rt;

// A thread state with a shadow stack of `n` frames, under the filters given.
struct State {
  Frame frames[8]{};
  uint8_t selected[8]{};
  ThreadState s{};
  explicit State(uint64_t depth, bool names = false) {
    s.stack_base = s.top = frames;
    s.stack_limit = frames + 8;
    s.record_depth = depth;
    if (names) s.selected = selected;
    s.guard = kGuardFilter;
    g_test_cache.clear();
  }
  // Whether the exit of `f` may take the fast path (filter_fast_exit decides it).
  bool fast_exit(const Frame* f) const { return filter_fast_exit(&s, f) >= 0; }
  // Pushes a frame of `fn` marked as the fast path would (decision `d`).
  Frame* push(uintptr_t fn, int d) {
    Frame* f = s.top++;
    f->fn = fn;
    filter_fast_mark(&s, f, d);
    return f;
  }
};

TEST(FilterFast, DepthAlone) {
  State st(2);
  EXPECT_EQ(filter_fast_entry(&st.s, 0x10), 1);
  Frame* a = st.push(0x10, 1);
  EXPECT_EQ(filter_fast_entry(&st.s, 0x20), 1);
  Frame* b = st.push(0x20, 1);
  EXPECT_EQ(filter_fast_entry(&st.s, 0x30), 0);  // index 2: below --max-depth=2
  Frame* c = st.push(0x30, 0);
  EXPECT_TRUE(st.fast_exit(c));
  st.s.hidden_filtered = 5;  // counted by kept-out exits
  // A recorded call must write the pending counts first: the slow path's put_hidden.
  EXPECT_FALSE(st.fast_exit(b));
  EXPECT_FALSE(st.fast_exit(a));
  st.s.top = b;
  EXPECT_EQ(filter_fast_entry(&st.s, 0x40), -1);
  st.s.top = c;
  EXPECT_EQ(filter_fast_entry(&st.s, 0x40), 0);  // kept out: nothing written, pending or not
  // The kept-out count that reaches kHiddenFlush is written by the slow path.
  st.s.hidden_filtered = kHiddenFlush - 2;
  EXPECT_TRUE(st.fast_exit(c));
  st.s.hidden_filtered = kHiddenFlush - 1;
  EXPECT_FALSE(st.fast_exit(c));
}

// No depth filter (record_depth 0) with the name filter on: a frame is decided by its name
// alone. (A first version took record_depth 0 for a depth of 0: every call kept out, and
// the calibration, which drops the name filter for its overlap rounds, measured nothing.)
TEST(FilterFast, NamesWithoutDepth) {
  State st(0, true);
  g_test_cache = {{0x10, 1}, {0x20, 0}};
  EXPECT_EQ(filter_fast_entry(&st.s, 0x10), 1);
  Frame* a = st.push(0x10, 1);
  EXPECT_EQ(filter_fast_entry(&st.s, 0x20), 0);
  Frame* b = st.push(0x20, 0);
  EXPECT_EQ(filter_fast_entry(&st.s, 0x30), -1);  // not cached: the slow path looks it up
  EXPECT_FALSE(frame_recorded(&st.s, b));
  EXPECT_TRUE(frame_recorded(&st.s, a));
  EXPECT_TRUE(st.fast_exit(b));
  EXPECT_TRUE(st.fast_exit(a));
  // A frame the slow path entered with a return-value spec: its exit captures the value.
  st.selected[0] |= kSelectedRetval;
  EXPECT_FALSE(st.fast_exit(a));
  // With a depth too: below it, kept out whatever the name, without asking the cache.
  State deep(1, true);
  g_test_cache = {{0x10, 1}};
  EXPECT_EQ(filter_fast_entry(&deep.s, 0x10), 1);
  deep.push(0x10, 1);
  EXPECT_EQ(filter_fast_entry(&deep.s, 0x30), 0);  // not cached, and no need
  Frame* c = deep.push(0x30, 0);
  EXPECT_FALSE(frame_recorded(&deep.s, c));
}

TEST(FilterFast, OtherStatesTakeTheSlowPath) {
  State st(4);
  Frame* a = st.push(0x10, 1);
  for (uint32_t bit : {kGuardOverflow, kGuardRescan, kGuardStopped, kGuardMonitor,
                       kGuardRuntime, kGuardUnwinding, 1u /* a hook is active: nested */}) {
    st.s.guard = kGuardFilter | bit;
    EXPECT_EQ(filter_fast_entry(&st.s, 0x20), -1) << bit;
    EXPECT_FALSE(st.fast_exit(a)) << bit;
  }
  st.s.guard = 0;  // no filter: the unfiltered fast path's, not this one's
  EXPECT_EQ(filter_fast_entry(&st.s, 0x20), -1);
  st.s.guard = kGuardFilter;
  FrameRecord records[8]{};
  st.s.records = records;  // the duration filter notes every ENTER for taking back
  EXPECT_EQ(filter_fast_entry(&st.s, 0x20), -1);
  EXPECT_FALSE(st.fast_exit(a));
  st.s.records = nullptr;
  st.s.top = st.s.stack_limit;  // the shadow stack is full
  EXPECT_EQ(filter_fast_entry(&st.s, 0x20), -1);
}

}  // namespace
