// Unit tests of the HTML report's data model (report/html_report.hpp): pruning of the
// calling-context tree into "other" nodes and the depth cut, the escaping of the data blob
// inside <script>, and the page being one file with the data in place.
#include <gtest/gtest.h>

#include "report/html_report.hpp"

namespace callmon::report {
namespace {

using analysis::CallGraph;
using analysis::ContextNode;

// Adds a context below `parent` and returns its index.
uint32_t add(CallGraph& g, uint32_t parent, uint32_t func, double time_ns) {
  ContextNode c;
  c.func = func;
  c.parent = parent;
  c.calls = 1;
  c.time_ns = time_ns;
  c.self_ns = time_ns;
  g.contexts.push_back(c);
  uint32_t id = static_cast<uint32_t>(g.contexts.size() - 1);
  g.contexts[parent].children.push_back(id);
  g.contexts[parent].self_ns -= time_ns;
  return id;
}

CallGraph graph_with_functions(size_t n) {
  CallGraph g;
  for (size_t i = 0; i < n; ++i) {
    analysis::GraphFunction f;
    f.name = "f" + std::to_string(i);
    f.module = "/m";
    f.calls = 1;
    g.functions.push_back(std::move(f));
  }
  g.contexts.emplace_back();  // the root
  return g;
}

TEST(HtmlPrune, SmallChildrenBecomeOneOtherNodePerParent) {
  CallGraph g = graph_with_functions(5);
  uint32_t main = add(g, 0, 0, 1000);
  add(g, main, 1, 600);
  uint32_t small = add(g, main, 2, 5);  // under 1% of 1000
  add(g, small, 3, 2);                  // merged with its parent
  add(g, main, 4, 4);
  FlameTree t = prune_context_tree(g, 0.01, 100);
  ASSERT_EQ(t.nodes.size(), 4u);  // root, main, f1, other
  EXPECT_EQ(t.contexts, 5u);
  EXPECT_EQ(t.merged, 3u);
  EXPECT_DOUBLE_EQ(t.threshold_ns, 10);
  EXPECT_DOUBLE_EQ(t.nodes[0].time_ns, 1000);
  EXPECT_EQ(t.nodes[1].func, 0);
  EXPECT_EQ(t.nodes[2].func, 1);
  const FlameNode& other = t.nodes[3];
  EXPECT_EQ(other.func, -1);
  EXPECT_EQ(other.parent, 1);
  EXPECT_EQ(other.calls, 2u);
  EXPECT_DOUBLE_EQ(other.time_ns, 9);
  EXPECT_EQ(other.merged, 3u);
}

TEST(HtmlPrune, ParentsComeFirstAndChildrenByTime) {
  CallGraph g = graph_with_functions(4);
  uint32_t a = add(g, 0, 0, 100);
  uint32_t b = add(g, 0, 1, 300);
  add(g, a, 2, 50);
  add(g, b, 3, 200);
  FlameTree t = prune_context_tree(g, 0, 100);
  ASSERT_EQ(t.nodes.size(), 5u);
  for (size_t i = 1; i < t.nodes.size(); ++i) EXPECT_LT(t.nodes[i].parent, int64_t(i));
  EXPECT_EQ(t.nodes[1].func, 1);  // 300 before 100
  EXPECT_EQ(t.nodes[2].func, 0);
  EXPECT_EQ(t.merged, 0u);
}

TEST(HtmlPrune, DepthCutCountsTheContextsLeftOut) {
  CallGraph g = graph_with_functions(1);
  uint32_t parent = 0;
  for (int depth = 0; depth < 10000; ++depth) parent = add(g, parent, 0, 1000);  // deep chain
  FlameTree t = prune_context_tree(g, 0.001, 256);
  EXPECT_EQ(t.nodes.size(), 257u);
  EXPECT_EQ(t.cut, 10000u - 256u);
  EXPECT_EQ(t.contexts, 10000u);
}

TEST(HtmlData, NoMarkupCanEndTheScriptElement) {
  CallGraph g = graph_with_functions(1);
  g.functions[0].name = "</script><script>alert(1)</script><!--";
  g.warnings.push_back("a <b> warning");
  std::string data = html_data_json(g, HtmlPageInfo{}, HtmlOptions{});
  EXPECT_EQ(data.find('<'), std::string::npos);
  EXPECT_NE(data.find("\\u003c/script>"), std::string::npos);
}

TEST(HtmlPage, OneFileWithTheDataInPlace) {
  CallGraph g = graph_with_functions(2);
  add(g, 0, 0, 10);
  std::string page = render_html(g, HtmlPageInfo{}, HtmlOptions{});
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(page.find("@CALLMON_"), std::string::npos);
  EXPECT_NE(page.find("id=\"callmon-data\" data-encoding=\"json\">{\"format\":1,"),
            std::string::npos);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
}

TEST(HtmlPage, LargeDataIsPackedAsGzipBase64) {
  CallGraph g = graph_with_functions(3);
  add(g, 0, 0, 10);
  HtmlOptions o;
  o.pack_above = 10;  // any blob is larger
  std::string page = render_html(g, HtmlPageInfo{}, o);
  size_t at = page.find("data-encoding=\"gzip+base64\">H4sI");  // gzip magic in base64
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(page.find("@CALLMON_"), std::string::npos);
  o.packing = HtmlPacking::kNever;
  EXPECT_NE(render_html(g, HtmlPageInfo{}, o).find("data-encoding=\"json\">"), std::string::npos);
}

TEST(HtmlPack, Base64OfKnownBytes) {
  // gzip output varies with zlib's version only in its header's OS byte; the base64 part
  // is checked on the fixed 10-byte header: 1f 8b 08 00 00000000 00 03.
  auto packed = gzip_base64("");
  ASSERT_TRUE(packed);
  EXPECT_EQ(packed->substr(0, 8), "H4sIAAAA");
  EXPECT_EQ(packed->size() % 4, 0u);
}

}  // namespace
}  // namespace callmon::report
