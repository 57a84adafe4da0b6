// The tui's whole state without a terminal: the views (tree, flat profile, callers and
// callees, thread picker, help), a cursor per view, the search and its prompt, and the
// screen as lines of text. Keys come in as characters or the Key codes below; the curses
// layer (curses_ui.hpp) only translates keys and paints the lines, so everything the user
// can do is testable here (tests/unit/tui_model_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tui/flat_view.hpp"
#include "tui/list_cursor.hpp"
#include "tui/search.hpp"
#include "tui/tree_view.hpp"
#include "tui/tui_data.hpp"
#include "tui/xref_view.hpp"

namespace callmon::tui {

// Keys that are not characters (characters are their own code).
enum Key : int {
  kKeyUp = 0x110000,
  kKeyDown,
  kKeyLeft,
  kKeyRight,
  kKeyPageUp,
  kKeyPageDown,
  kKeyHome,
  kKeyEnd,
  kKeyEnter,
  kKeyBackspace,
  kKeyEscape,
  kKeyTab,
};

enum class Mode { kTree, kFlat, kXref, kThreads, kHelp };

// How a screen line is painted.
enum class Style { kTitle, kHeader, kNormal, kCursor, kStatus };

struct ScreenLine {
  std::string text;
  Style style = Style::kNormal;
};

// What the caller of handle() must do next.
enum class Action { kNone, kQuit, kLoadThread };

class App {
 public:
  // `recording` names the directory in the title; `threads` are the picker's entries
  // (thread_choices()), the first being every thread.
  App(std::string recording, std::vector<ThreadChoice> threads);

  // Shows `data`, computed for thread `tid` (0: all). Resets the views and their cursors.
  void set_data(TuiData data, uint32_t tid);
  // Handles one key. kLoadThread: the user picked thread requested_thread(); the caller
  // computes its data and calls set_data(), or set_message() with why it could not.
  Action handle(int key);
  uint32_t requested_thread() const { return requested_tid_; }
  // A one-line message on the status line until the next key.
  void set_message(std::string message) { message_ = std::move(message); }

  // The screen, `height` lines each at most `width` characters (the cursor line padded to
  // `width`): title, column heads, rows (the cursor's marked ">"), status line.
  std::vector<ScreenLine> render(size_t width, size_t height);

  // For tests and the status line.
  Mode mode() const { return mode_; }
  size_t cursor() const;
  const TreeView& tree() const { return tree_; }
  const FlatView& flat() const { return flat_; }
  const XrefView& xref() const { return xref_; }
  const TuiData& data() const { return *data_; }

 private:
  ListCursor& cur();
  const ListCursor& cur() const { return const_cast<App*>(this)->cur(); }
  size_t row_count() const;
  // The graph function under the cursor, kGraphRoot when there is none.
  uint32_t function_at_cursor() const;
  void open_xref(uint32_t func);
  // Shows the tree with the cursor on the call path of `func` with the most time.
  void show_in_tree(uint32_t func);
  void switch_mode(Mode mode);
  Action handle_prompt(int key);
  void handle_tree(int key);
  void handle_flat(int key);
  void handle_xref(int key);
  Action handle_threads(int key);
  bool handle_move(int key);
  // Finds the next match of the search in the current view (step 1 or -1); says so on the
  // status line when there is none.
  void search_next(int step);

  // Rendering (app_render.cpp).
  std::string title() const;
  std::string header() const;
  std::string row_text(size_t row) const;
  std::string status() const;

  std::string recording_;
  std::vector<ThreadChoice> threads_;
  uint32_t tid_ = 0;
  uint32_t requested_tid_ = 0;
  std::unique_ptr<TuiData> data_;  // on the heap: the views point into it
  std::unordered_map<std::string, uint32_t> func_by_key_;  // name '\0' module -> function
  TreeView tree_;
  FlatView flat_;
  XrefView xref_;
  ListCursor tree_cur_, flat_cur_, xref_cur_, threads_cur_, help_cur_;
  Mode mode_ = Mode::kTree;
  Mode overlay_return_ = Mode::kTree;  // where Esc goes from the picker and help
  Mode xref_return_ = Mode::kTree;     // where Esc goes from callers/callees
  Search search_;
  bool prompting_ = false;
  std::string prompt_;
  std::string message_;
  size_t page_ = 20;  // rows in a page, from the last render()
};

}  // namespace callmon::tui
