// The export sinks on event streams fed straight to a CallWalker: the stack trie of the
// folded export (self time per distinct stack, threads merging, memory per distinct stack
// not per call) and the call graph of the callgrind export (recursive arcs counted once),
// plus the JSON quoting of the streamed exports.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <vector>

#include "analysis/export_callgraph.hpp"
#include "analysis/export_stacks.hpp"
#include "report/export_json.hpp"

namespace callmon::analysis {
namespace {

format::Event enter(uint64_t t, uint64_t addr) {
  format::Event e;
  e.type = format::Event::kEnter;
  e.ticks = t;
  e.addr = addr;
  return e;
}
format::Event leave(uint64_t t) {
  format::Event e;
  e.type = format::Event::kExit;
  e.ticks = t;
  return e;
}

template <class Sink>
void walk(Sink& sink, const std::vector<format::Event>& events) {
  CallWalker<Sink> walker(sink);
  for (const auto& e : events) walker.feed(e);
  walker.finish();
}

TEST(StackTrie, SelfTimePerDistinctStack) {
  StackTrie trie;
  StackSink sink(trie);
  // main(1) -> a(2) -> b(3) twice, then main -> b.
  walk(sink, {enter(0, 1), enter(10, 2), enter(20, 3), leave(30), enter(40, 3), leave(45),
              leave(50), enter(60, 3), leave(70), leave(100)});
  const auto& n = trie.nodes();
  ASSERT_EQ(n.size(), 5u);  // root, main, main;a, main;a;b, main;b
  EXPECT_EQ(n[1].self, 100 - 40 - 10);
  EXPECT_EQ(n[2].self, 40 - 15);
  EXPECT_EQ(n[3].self, 15);  // both calls of b under a: one node
  EXPECT_EQ(n[3].parent, 2u);
  EXPECT_EQ(n[4].self, 10);
  EXPECT_EQ(n[4].parent, 1u);
}

TEST(StackTrie, FoldRecursionMergesIntoTheFirstOccurrence) {
  StackTrie trie;
  StackSink sink(trie, /*fold_recursion=*/true);
  // main(1) -> a(2) -> b(3) -> a(2) -> c(4), and a -> a (direct), then main -> b -> c.
  walk(sink, {enter(0, 1), enter(10, 2), enter(20, 3), enter(30, 2), enter(40, 4), leave(50),
              leave(60), leave(70), enter(75, 2), leave(78), leave(80), enter(85, 3),
              enter(86, 4), leave(88), leave(90), leave(100)});
  const auto& n = trie.nodes();
  // root, main, main;a, main;a;b, main;a;c (the inner a folded into the first), main;b,
  // main;b;c.
  ASSERT_EQ(n.size(), 7u);
  EXPECT_EQ(n[2].addr, 2u);
  // The outer a (70 less b's 50 and the inner a's 3), the a under b (30 less c's 10) and
  // the direct a -> a (3).
  EXPECT_EQ(n[2].self, (70 - 50 - 3) + (30 - 10) + 3);
  EXPECT_EQ(n[3].self, (30 - 20) + (70 - 60));
  EXPECT_EQ(n[4].addr, 4u);
  EXPECT_EQ(n[4].parent, 2u);
  EXPECT_EQ(n[4].self, 10);
  EXPECT_EQ(n[5].parent, 1u);  // b again, no longer under a: a stack of its own
  EXPECT_EQ(n[6].parent, 5u);
  // Without folding the same stream makes main;a;b;a;c and main;a;a.
  StackTrie plain;
  StackSink unfolded(plain);
  walk(unfolded, {enter(0, 1), enter(10, 2), enter(20, 3), enter(30, 2), enter(40, 4),
                  leave(50), leave(60), leave(70), enter(75, 2), leave(78), leave(80)});
  EXPECT_EQ(plain.nodes().size(), 7u);
}

TEST(StackTrie, NodesGrowWithStacksNotCalls) {
  StackTrie trie;
  StackSink sink(trie);
  std::vector<format::Event> ev{enter(0, 1)};
  for (uint64_t i = 0; i < 10000; ++i) {
    ev.push_back(enter(1 + 2 * i, 2));
    ev.push_back(leave(2 + 2 * i));
  }
  ev.push_back(leave(30000));
  walk(sink, ev);
  EXPECT_EQ(trie.nodes().size(), 3u);
  EXPECT_EQ(trie.nodes()[2].self, 10000);
}

TEST(StackTrie, ThreadsShareTheTrie) {
  StackTrie trie;
  StackSink one(trie);
  walk(one, {enter(0, 1), enter(1, 2), leave(5), leave(6)});
  StackSink two(trie);
  walk(two, {enter(0, 1), enter(1, 2), leave(8), leave(9)});
  ASSERT_EQ(trie.nodes().size(), 3u);
  EXPECT_EQ(trie.nodes()[2].self, 4 + 7);
  EXPECT_EQ(trie.nodes()[1].self, 2 + 2);
}

TEST(Callgraph, RecursiveArcCountedOnce) {
  CallgraphSink sink;
  // main(1) -> f(2) -> f -> f, as tests/traces/recursion.txt.
  walk(sink, {enter(0, 1), enter(10, 2), enter(20, 2), enter(30, 2), leave(40), leave(60),
              leave(100), leave(110)});
  ASSERT_EQ(sink.arcs().size(), 2u);
  const auto& outer = sink.arcs()[0];
  EXPECT_EQ(outer.caller, 1u);
  EXPECT_EQ(outer.calls, 1u);
  EXPECT_EQ(outer.incl, 90u);
  const auto& rec = sink.arcs()[1];
  EXPECT_EQ(rec.caller, 2u);
  EXPECT_EQ(rec.callee, 2u);
  EXPECT_EQ(rec.calls, 2u);
  EXPECT_EQ(rec.incl, 40u);  // 20..60; the nested 30..40 lies inside it
  ASSERT_EQ(sink.functions().size(), 2u);
  EXPECT_EQ(sink.functions()[0].self, 20);
  EXPECT_EQ(sink.functions()[1].self, 90);
  EXPECT_EQ(sink.functions()[1].calls, 3u);
}

TEST(Callgraph, InheritedFramesAddNoCalls) {
  CallgraphSink sink;
  format::Event inherit;
  inherit.type = format::Event::kInherit;
  inherit.ticks = 0;
  inherit.addr = 1;
  walk(sink, {inherit, enter(10, 2), leave(20), leave(30)});
  ASSERT_EQ(sink.functions().size(), 2u);
  EXPECT_EQ(sink.functions()[0].calls, 0u);
  EXPECT_EQ(sink.functions()[0].self, 0);
  ASSERT_EQ(sink.arcs().size(), 1u);
  EXPECT_EQ(sink.arcs()[0].calls, 1u);
  EXPECT_EQ(sink.arcs()[0].incl, 10u);
}

format::Event suspend(uint64_t t, uint64_t count) {
  format::Event e;
  e.type = format::Event::kUnwind;
  e.ticks = t;
  e.count = count;
  e.reason = 4;
  return e;
}
format::Event resume(uint64_t t, uint64_t addr) {
  format::Event e;
  e.type = format::Event::kInherit;
  e.ticks = t;
  e.addr = addr;
  return e;
}

// A ucontext coroutine (tests/traces/suspended.txt, shorter): main(1) -> run(2) switches to
// coro(3), which yields back; run returns, main ends. The continuation of main and run
// (INHERIT after the suspension) adds its time to their stacks and functions, no call.
const std::vector<format::Event> kSwitch = {
    enter(0, 1),  enter(10, 2), suspend(20, 2), enter(20, 3), suspend(50, 1),
    resume(50, 1), resume(50, 2), leave(60), leave(70)};

TEST(StackTrie, ContinuationsAddToTheirStack) {
  StackTrie trie;
  StackSink sink(trie);
  walk(sink, kSwitch);
  const auto& n = trie.nodes();
  ASSERT_EQ(n.size(), 4u);  // root, main, main;run, coro
  EXPECT_EQ(n[1].self, 10 + 10);  // 0..10 and 60..70
  EXPECT_EQ(n[2].self, 10 + 10);  // 10..20 and 50..60
  EXPECT_EQ(n[3].self, 30);
}

TEST(Callgraph, ContinuationsAddTimeNotCalls) {
  CallgraphSink sink;
  walk(sink, kSwitch);
  ASSERT_EQ(sink.functions().size(), 3u);
  EXPECT_EQ(sink.functions()[0].calls, 1u);
  EXPECT_EQ(sink.functions()[0].self, 20);
  EXPECT_EQ(sink.functions()[1].calls, 1u);
  EXPECT_EQ(sink.functions()[1].self, 20);
  ASSERT_EQ(sink.arcs().size(), 1u);  // main -> run
  EXPECT_EQ(sink.arcs()[0].calls, 1u);
  EXPECT_EQ(sink.arcs()[0].incl, 20u);
}

TEST(ExportJson, Quote) {
  EXPECT_EQ(report::json_quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(report::json_quote("x\ny"), R"("x\u000ay")");
  EXPECT_EQ(report::json_quote("\xc3\xa9"), "\"\xc3\xa9\"");
  EXPECT_EQ(report::json_quote("bad\xff"), R"("bad\ufffd")");
  EXPECT_EQ(report::fixed3(-0.0001), "0.000");
  EXPECT_EQ(report::fixed3(1.5), "1.500");
}

TEST(ExportJson, InPlaceNumbers) {
  std::string s = "x";
  report::append_fixed3(s, -0.0001);
  report::append_uint(s, 18446744073709551615ull);
  report::append_fixed3(s, 1234567890123.4567);
  EXPECT_EQ(s, "x0.00018446744073709551615" + fmt::format("{:.3f}", 1234567890123.4567));
}

}  // namespace
}  // namespace callmon::analysis
