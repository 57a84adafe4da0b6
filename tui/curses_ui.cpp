// ncurses drawing and key reading for the tui (curses_ui.hpp).
#include "tui/curses_ui.hpp"

#include <curses.h>

#include <clocale>

namespace callmon::tui {
namespace {

// Restores the terminal when the loop ends, however it ends.
struct CursesSession {
  CursesSession() {
    // The terminal's character set, so that UTF-8 in names reaches it as text (only the
    // character classes: numbers and messages keep the C locale).
    std::setlocale(LC_CTYPE, "");
    // A short delay for Escape: the default second makes Esc feel broken.
    set_escdelay(25);
    initscr();
    cbreak();
    noecho();
    nonl();  // Enter arrives as '\r', told apart from Ctrl-J
    keypad(stdscr, TRUE);
    curs_set(0);
    if (has_colors()) {
      start_color();
      use_default_colors();
      init_pair(1, COLOR_BLACK, COLOR_CYAN);   // title and status
      init_pair(2, COLOR_YELLOW, -1);          // column heads
    }
  }
  ~CursesSession() { endwin(); }
  CursesSession(const CursesSession&) = delete;
  CursesSession& operator=(const CursesSession&) = delete;
};

int translate(int ch) {
  switch (ch) {
    case KEY_UP: return kKeyUp;
    case KEY_DOWN: return kKeyDown;
    case KEY_LEFT: return kKeyLeft;
    case KEY_RIGHT: return kKeyRight;
    case KEY_PPAGE: return kKeyPageUp;
    case KEY_NPAGE: return kKeyPageDown;
    case KEY_HOME: return kKeyHome;
    case KEY_END: return kKeyEnd;
    case KEY_ENTER: case '\r': case '\n': return kKeyEnter;
    case KEY_BACKSPACE: case 127: case 8: return kKeyBackspace;
    case 27: return kKeyEscape;
    case '\t': return kKeyTab;
    default: return ch;
  }
}

attr_t style_attr(Style s) {
  bool color = has_colors();
  switch (s) {
    case Style::kTitle:
    case Style::kStatus: return color ? COLOR_PAIR(1) : A_REVERSE;
    case Style::kHeader: return color ? (COLOR_PAIR(2) | A_BOLD) : A_BOLD;
    case Style::kCursor: return A_REVERSE;
    case Style::kNormal: return A_NORMAL;
  }
  return A_NORMAL;
}

void paint(App& app) {
  int h, w;
  getmaxyx(stdscr, h, w);
  erase();
  auto lines = app.render(static_cast<size_t>(w), static_cast<size_t>(h));
  for (size_t y = 0; y < lines.size(); ++y) {
    attrset(style_attr(lines[y].style));
    mvaddnstr(static_cast<int>(y), 0, lines[y].text.c_str(), w);
  }
  attrset(A_NORMAL);
  refresh();
}

}  // namespace

int run_terminal(App& app, const ThreadLoader& load) {
  CursesSession session;
  int errors = 0;
  for (;;) {
    paint(app);
    int ch = getch();
    // getch() blocks, so a run of errors means the terminal is gone (hang-up): stop rather
    // than spin.
    if (ch == ERR) {
      if (++errors > 100) return 1;
      continue;
    }
    errors = 0;
    if (ch == KEY_RESIZE) continue;
    Action action = app.handle(translate(ch));
    if (action == Action::kQuit) return 0;
    if (action == Action::kLoadThread) {
      app.set_message("reading the recording...");
      paint(app);
      TuiData data;
      uint32_t tid = app.requested_thread();
      if (auto error = load(tid, data)) {
        app.set_message(*error);
      } else {
        app.set_data(std::move(data), tid);
      }
    }
  }
}

}  // namespace callmon::tui
