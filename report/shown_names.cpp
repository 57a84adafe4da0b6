// The chosen name style and note wrapping (shown_names.hpp).
#include "report/shown_names.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include "analysis/symbolizer.hpp"

namespace callmon::report {

namespace {
// One command per process: the command line sets this before rendering starts.
analysis::NameStyle g_style = analysis::NameStyle::short_form;
}  // namespace

void set_name_style(analysis::NameStyle style) {
  g_style = style;
  analysis::set_mangled_names(style == analysis::NameStyle::mangled);
}

analysis::NameStyle name_style() { return g_style; }

std::string shown_name(const std::string& name) {
  // Mangled names come so from the symbolizer; full names are the symbolizer's.
  return g_style == analysis::NameStyle::short_form ? analysis::short_name(name) : name;
}

std::vector<std::string> shown_row_names(const std::vector<std::string>& names) {
  return analysis::row_labels(names, g_style);
}

size_t note_width() {
  winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
    return ws.ws_col;
  return 100;
}

std::string note_lines(const std::string& text, size_t width) {
  const std::string first = "# note: ";
  const std::string more = "#   ";
  std::string out = first;
  size_t line_len = first.size();
  bool line_empty = true;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    std::string word = text.substr(i, j - i);
    i = j + 1;
    if (word.empty()) continue;
    if (!line_empty && line_len + 1 + word.size() > width) {
      out += '\n';
      out += more;
      line_len = more.size();
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++line_len;
    }
    out += word;
    line_len += word.size();
    line_empty = false;
  }
  out += '\n';
  return out;
}

}  // namespace callmon::report
