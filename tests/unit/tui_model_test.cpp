// The tui's model without a terminal (tui/app_model.hpp and the views under it): folding of
// the calling-context tree and its bounded opening, the flat view's sort by column, the
// callers/callees jumps and their history, search (folded calls unfold, n/N wrap, bad
// regex), the thread picker's request, help, quit, and the screen's lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tui/app_model.hpp"
#include "tui/list_cursor.hpp"
#include "tui/search.hpp"
#include "tui/tree_view.hpp"

namespace callmon::tui {
namespace {

using analysis::CallGraph;
using analysis::ContextNode;
using analysis::FunctionRow;
using analysis::GraphArc;
using analysis::GraphFunction;

// A small recording's data, built by hand:
//   main (1000 ns) -> parse (600) -> lex (500)
//                  -> run (300)   -> lex (100)
//   worker (50)
// Function ids: main 0, parse 1, lex 2, run 3, worker 4.
TuiData sample() {
  TuiData d;
  CallGraph& g = d.graph;
  g.total_calls = 6;
  const char* names[] = {"main", "parse", "lex", "run", "worker"};
  uint64_t calls[] = {1, 1, 3, 1, 1};
  double totals[] = {1000, 600, 600, 300, 50};
  for (int i = 0; i < 5; ++i) {
    GraphFunction f;
    f.name = names[i];
    f.calls = calls[i];
    f.total_ns = totals[i];
    f.self_ns = totals[i] / 2;
    f.total_range = {totals[i], totals[i]};
    f.self_range = {totals[i] / 2, totals[i] / 2};
    g.functions.push_back(f);
    FunctionRow r;
    r.name = names[i];
    r.calls = calls[i];
    r.total_ns = r.total_lo_ns = r.total_hi_ns = totals[i];
    r.self_ns = r.self_lo_ns = r.self_hi_ns = totals[i] / 2;
    r.incl_ns = totals[i];
    d.profile.functions.push_back(r);
  }
  auto node = [&](uint32_t parent, uint32_t func, uint64_t n, double time) {
    ContextNode c;
    c.parent = parent;
    c.func = func;
    c.calls = n;
    c.time_ns = time;
    c.time_range = {time, time};
    g.contexts.push_back(c);
    uint32_t id = static_cast<uint32_t>(g.contexts.size() - 1);
    g.contexts[parent].children.push_back(id);
    return id;
  };
  g.contexts.emplace_back();  // root
  uint32_t worker = node(0, 4, 1, 50);  // before main: the view sorts by time
  (void)worker;
  uint32_t m = node(0, 0, 1, 1000);
  uint32_t run = node(m, 3, 1, 300);
  node(run, 2, 1, 100);
  uint32_t parse = node(m, 1, 1, 600);
  node(parse, 2, 2, 500);
  auto arc = [&](uint32_t caller, uint32_t callee, uint64_t n, double t) {
    GraphArc a;
    a.caller = caller;
    a.callee = callee;
    a.calls = n;
    a.time_ns = t;
    g.arcs.push_back(a);
  };
  arc(analysis::kGraphRoot, 0, 1, 1000);
  arc(analysis::kGraphRoot, 4, 1, 50);
  arc(0, 1, 1, 600);
  arc(0, 3, 1, 300);
  arc(1, 2, 2, 500);
  arc(3, 2, 1, 100);
  return d;
}

App make_app() {
  App app("rec", {{0, "all threads"}, {11, "pid 10 tid 11 /bin/x"}});
  app.set_data(sample(), 0);
  return app;
}

// The function names of the screen's rows, in order (the text after the tree's marks).
std::vector<std::string> screen_text(App& app, size_t height = 20) {
  std::vector<std::string> out;
  for (const ScreenLine& l : app.render(100, height)) out.push_back(l.text);
  return out;
}

std::string tree_names(const App& app) {
  std::string out;
  const auto& g = app.data().graph;
  for (const TreeRow& r : app.tree().rows()) {
    out += std::string(r.depth, '.') + g.functions[g.contexts[r.node].func].name + ' ';
  }
  return out;
}

TEST(TuiModel, TreeOpensSortedByTimeAndFolds) {
  App app = make_app();
  EXPECT_EQ(tree_names(app), "main .parse ..lex .run ..lex worker ");
  app.handle(kKeyEnter);  // fold main
  EXPECT_EQ(tree_names(app), "main worker ");
  app.handle(kKeyRight);  // unfold main
  EXPECT_EQ(tree_names(app), "main .parse ..lex .run ..lex worker ");
  app.handle(kKeyRight);  // on an unfolded row: to its first child
  EXPECT_EQ(app.cursor(), 1u);
  app.handle(kKeyLeft);  // fold parse
  EXPECT_EQ(tree_names(app), "main .parse .run ..lex worker ");
  app.handle(kKeyLeft);  // folded: to the parent
  EXPECT_EQ(app.cursor(), 0u);
  app.handle('C');
  EXPECT_EQ(tree_names(app), "main worker ");
  app.handle('E');
  EXPECT_EQ(tree_names(app), "main .parse ..lex .run ..lex worker ");
}

TEST(TuiModel, TreeOpensOnlyWhatFitsTheLimit) {
  // A root with one function calling kExpandLimit others: only the first level opens.
  TuiData d;
  d.graph.functions.resize(2);
  d.graph.contexts.emplace_back();
  d.graph.contexts.push_back(ContextNode{0, 0, 1, 1, 0, {}, {}, {}});
  d.graph.contexts[0].children.push_back(1);
  for (size_t i = 0; i < TreeView::kExpandLimit + 5; ++i) {
    d.graph.contexts.push_back(ContextNode{1, 1, 1, 1, 0, {}, {}, {}});
    d.graph.contexts[1].children.push_back(static_cast<uint32_t>(d.graph.contexts.size() - 1));
  }
  TreeView view(&d.graph);
  EXPECT_EQ(view.rows().size(), 1u);
  EXPECT_FALSE(view.expand_all(0));  // stopped by the limit
  view.expand(0);
  EXPECT_EQ(view.rows().size(), TreeView::kExpandLimit + 6);
}

TEST(TuiModel, FlatViewSortsByColumn) {
  App app = make_app();
  app.handle('r');
  EXPECT_EQ(app.mode(), Mode::kFlat);
  auto names = [&] {
    std::string out;
    for (const auto& r : app.flat().rows()) out += r.name + ' ';
    return out;
  };
  EXPECT_EQ(names(), "main lex parse run worker ");  // total; ties by name
  app.handle('s');                                     // self
  app.handle('s');                                     // calls
  EXPECT_EQ(app.flat().sort_key(), analysis::SortKey::kCalls);
  EXPECT_EQ(names(), "lex main parse run worker ");
  auto screen = screen_text(app);
  EXPECT_NE(screen[1].find("[Calls]"), std::string::npos) << screen[1];
  EXPECT_NE(screen[2].find("lex"), std::string::npos);
  app.handle('S');
  app.handle('S');
  app.handle('S');  // wraps around to the name column
  EXPECT_EQ(app.flat().sort_key(), analysis::SortKey::kName);
  EXPECT_EQ(names(), "lex main parse run worker ");
}

TEST(TuiModel, CallersAndCalleesJumpAndGoBack) {
  App app = make_app();
  app.handle(kKeyDown);  // parse
  app.handle('g');
  ASSERT_EQ(app.mode(), Mode::kXref);
  EXPECT_EQ(app.xref().func(), 1u);
  const auto& lines = app.xref().lines();
  // Called by main; calls lex.
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[1].func, 0u);
  EXPECT_EQ(lines[3].kind, XrefLine::Kind::kHeading);
  EXPECT_EQ(lines[4].func, 2u);
  EXPECT_EQ(app.cursor(), 2u);  // the function's own line
  app.handle(kKeyDown);
  app.handle(kKeyDown);
  app.handle(kKeyEnter);  // to lex: called by parse and run
  EXPECT_EQ(app.xref().func(), 2u);
  EXPECT_EQ(app.xref().lines().size(), 5u);
  app.handle('b');
  EXPECT_EQ(app.xref().func(), 1u);
  // Enter on lex's own line: the tree, on lex's busiest path (under parse), unfolded.
  app.handle(kKeyDown);
  app.handle(kKeyDown);
  app.handle(kKeyEnter);
  app.handle(kKeyUp);
  app.handle(kKeyUp);
  ASSERT_EQ(app.xref().func(), 2u);
  app.handle('t');
  app.handle('C');
  app.handle('g');  // main's callers/callees
  app.handle('b');  // back to lex
  ASSERT_EQ(app.xref().func(), 2u);
  app.handle(kKeyEnter);
  EXPECT_EQ(app.mode(), Mode::kTree);
  EXPECT_EQ(tree_names(app), "main .parse ..lex .run worker ");
  EXPECT_EQ(app.cursor(), 2u);
  app.handle('g');
  app.handle('b');
  app.handle(kKeyEscape);
  EXPECT_EQ(app.mode(), Mode::kTree);
  // From the flat view, Enter opens the same view.
  app.handle('r');
  app.handle(kKeyEnter);
  EXPECT_EQ(app.mode(), Mode::kXref);
  EXPECT_EQ(app.xref().func(), 0u);  // main, first by total
}

TEST(TuiModel, SearchUnfoldsAndWraps) {
  App app = make_app();
  app.handle('C');
  for (char c : std::string("/le")) app.handle(c);
  app.handle(kKeyEnter);
  // The first lex, under parse, is revealed and under the cursor.
  EXPECT_EQ(tree_names(app), "main .parse ..lex .run worker ");
  EXPECT_EQ(app.cursor(), 2u);
  app.handle('n');  // the second one, under run
  EXPECT_EQ(app.cursor(), 4u);
  app.handle('n');  // wraps to the first
  EXPECT_EQ(app.cursor(), 2u);
  app.handle('N');
  EXPECT_EQ(app.cursor(), 4u);
  // A bad regex says so and keeps the previous pattern.
  for (char c : std::string("/(x")) app.handle(c);
  app.handle(kKeyEnter);
  auto screen = screen_text(app);
  EXPECT_NE(screen.back().find("bad regex '(x'"), std::string::npos) << screen.back();
  app.handle('n');
  EXPECT_EQ(app.cursor(), 2u);
  // No match: the cursor stays.
  for (char c : std::string("/zzz")) app.handle(c);
  app.handle(kKeyEnter);
  EXPECT_EQ(app.cursor(), 2u);
  EXPECT_NE(screen_text(app).back().find("not found: zzz"), std::string::npos);
  // In the flat view the same search walks its rows.
  app.handle('r');
  for (char c : std::string("/^w")) app.handle(c);
  app.handle(kKeyEnter);
  EXPECT_EQ(app.flat().rows()[app.cursor()].name, "worker");
}

TEST(TuiModel, EscapeReturnsWhereTheViewWasOpened) {
  App app = make_app();
  app.handle('r');
  app.handle('g');
  ASSERT_EQ(app.mode(), Mode::kXref);
  app.handle('?');  // help over callers/callees
  app.handle(kKeyEscape);
  EXPECT_EQ(app.mode(), Mode::kXref);
  app.handle('T');
  app.handle(kKeyEscape);
  EXPECT_EQ(app.mode(), Mode::kXref);
  app.handle(kKeyEscape);  // callers/callees were opened from the flat profile
  EXPECT_EQ(app.mode(), Mode::kFlat);
}

TEST(TuiModel, PromptEditsAndCancels) {
  App app = make_app();
  for (char c : std::string("/runx")) app.handle(c);
  app.handle(kKeyBackspace);
  EXPECT_EQ(screen_text(app).back().substr(0, 4), "/run");
  app.handle('q');  // typed into the prompt, not quitting
  app.handle(kKeyEscape);
  EXPECT_EQ(app.handle('n'), Action::kNone);
  EXPECT_NE(screen_text(app).back().find("no search yet"), std::string::npos);
}

TEST(TuiModel, ThreadPickerHelpAndQuit) {
  App app = make_app();
  app.handle('T');
  EXPECT_EQ(app.mode(), Mode::kThreads);
  EXPECT_EQ(app.handle(kKeyEnter), Action::kNone);  // the thread already shown
  app.handle('T');
  app.handle(kKeyDown);
  EXPECT_EQ(app.handle(kKeyEnter), Action::kLoadThread);
  EXPECT_EQ(app.requested_thread(), 11u);
  app.set_data(sample(), 11);
  EXPECT_NE(screen_text(app)[0].find("thread 11"), std::string::npos);
  app.handle('?');
  EXPECT_EQ(app.mode(), Mode::kHelp);
  EXPECT_NE(screen_text(app, 40)[2].find("Views"), std::string::npos);
  app.handle(kKeyEscape);
  EXPECT_EQ(app.mode(), Mode::kTree);
  EXPECT_EQ(app.handle('q'), Action::kQuit);
}

TEST(TuiModel, ScreenLinesFitAndMarkTheCursor) {
  App app = make_app();
  auto lines = app.render(40, 6);
  ASSERT_EQ(lines.size(), 6u);
  for (const ScreenLine& l : lines) EXPECT_LE(l.text.size(), 40u);
  EXPECT_EQ(lines[0].style, Style::kTitle);
  EXPECT_EQ(lines[2].style, Style::kCursor);
  EXPECT_EQ(lines[2].text[0], '>');
  EXPECT_EQ(lines[5].style, Style::kStatus);
  // A cut never splits a UTF-8 sequence.
  App utf("r\xc3\xa9" "c", {});
  utf.set_data(TuiData{}, 0);
  std::string title = utf.render(16, 3)[0].text;  // " callmon tui: r" + 2 bytes of "é"
  EXPECT_EQ(title, " callmon tui: r ");
  // Paging keeps the cursor on screen: 3 rows of body.
  app.handle(kKeyEnd);
  lines = app.render(100, 6);
  EXPECT_NE(lines[4].text.find("worker"), std::string::npos) << lines[4].text;
  // Figures as report formats them, with the range where uncertain.
  app.handle(kKeyHome);
  EXPECT_NE(app.render(100, 6)[2].text.find("1.00 us"), std::string::npos);
}

TEST(TuiModel, EmptyRecordingShowsNoCalls) {
  App app("rec", {});
  app.set_data(TuiData{}, 0);
  auto lines = app.render(60, 5);
  EXPECT_NE(lines[2].text.find("(no calls)"), std::string::npos);
  lines = app.render(60, 3);  // no room for rows: the status line stays
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2].style, Style::kStatus);
  EXPECT_EQ(lines[2].text.find("(no calls)"), std::string::npos);
  for (int key : {int{kKeyDown}, int{kKeyEnter}, int{'E'}, int{'g'}, int{'n'}, int{'r'},
                  int{'s'}, int{kKeyEnter}})
    app.handle(key);
  EXPECT_EQ(app.handle('q'), Action::kQuit);
}

TEST(TuiSearch, FindWrapsBothWays) {
  Search s;
  std::vector<std::string> names = {"a", "bx", "c", "dx"};
  auto name = [&](size_t i) -> const std::string& { return names[i]; };
  EXPECT_FALSE(s.find(4, 0, 1, name));
  EXPECT_FALSE(s.set("x"));
  EXPECT_EQ(s.find(4, 0, 1, name), 1u);
  EXPECT_EQ(s.find(4, 1, 1, name), 3u);
  EXPECT_EQ(s.find(4, 3, 1, name), 1u);
  EXPECT_EQ(s.find(4, 1, -1, name), 3u);
  EXPECT_TRUE(s.set("["));
  EXPECT_EQ(s.pattern(), "x");
}

TEST(TuiListCursor, ClampsAndScrolls) {
  ListCursor c;
  c.set_count(10);
  c.move(-3);
  EXPECT_EQ(c.pos(), 0u);
  c.move(25);
  EXPECT_EQ(c.pos(), 9u);
  EXPECT_EQ(c.top(4), 6u);
  c.set(2);
  EXPECT_EQ(c.top(4), 2u);
  c.set_count(0);
  EXPECT_EQ(c.pos(), 0u);
}

}  // namespace
}  // namespace callmon::tui
