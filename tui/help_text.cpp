// The help screen's text (help_text.hpp); docs/tui.md lists the same keys.
#include "tui/help_text.hpp"

namespace callmon::tui {

const std::vector<std::string>& help_lines() {
  static const std::vector<std::string> lines = {
      "Views",
      "  t            call tree (calling contexts, folded and unfolded)",
      "  r            flat profile (the figures of `callmon report`)",
      "  Tab          next view",
      "  g            callers and callees of the function under the cursor",
      "  T            thread picker (Enter picks; 'all threads' shows every thread)",
      "  ?            this help (Esc or ? closes it)",
      "  q            quit",
      "",
      "Moving",
      "  Up/Down j/k  one row",
      "  PgUp/PgDn    one page",
      "  Home/End     first/last row",
      "",
      "Call tree",
      "  Enter/Space  fold or unfold the row",
      "  Right l +    unfold (on an unfolded row: go to its first child)",
      "  Left h -     fold (on a folded row or a leaf: go to its parent)",
      "  E            unfold the whole subtree (at most 2000 rows at once)",
      "  C            fold everything",
      "",
      "Flat profile",
      "  s / S        sort by the next / previous column",
      "  Enter        callers and callees of the function",
      "",
      "Callers and callees",
      "  Enter        go to the caller or callee under the cursor; on the function",
      "               itself: show its busiest call path in the tree",
      "  Backspace b  back to the function shown before",
      "  Esc          back to the view it was opened from",
      "",
      "Search",
      "  /REGEX Enter find a function (ECMAScript regex, anywhere in the name;",
      "               in the tree, folded calls too: their parents unfold)",
      "  n / N        next / previous match",
      "",
      "Times are compensated for callmon's own cost per call, as in `callmon report`;",
      "a range (lo..hi) is shown where the figure is uncertain (docs/runtime.md).",
  };
  return lines;
}

}  // namespace callmon::tui
