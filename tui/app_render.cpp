// The tui's screen as lines of text (App::render in app_model.hpp): title, column heads,
// the current view's rows around the cursor, status line. Figures are formatted as report
// and graph format them (report/units.hpp): a range where the figure is uncertain.
#include <fmt/format.h>

#include <algorithm>

#include "report/graph_render.hpp"
#include "report/units.hpp"
#include "tui/app_model.hpp"
#include "tui/help_text.hpp"

namespace callmon::tui {
namespace {

constexpr size_t kFigure = 13;  // "1.20..3.45 ms" fits
constexpr size_t kCalls = 9;
constexpr size_t kShort = 9;    // avg: never a range
constexpr uint32_t kMaxIndent = 40;  // deeper rows say their depth instead

std::string figure(double ns, const analysis::NsRange& r) {
  return report::human_figure(ns, r.lo, r.hi);
}

const char* mode_name(Mode m) {
  switch (m) {
    case Mode::kTree: return "call tree";
    case Mode::kFlat: return "flat profile";
    case Mode::kXref: return "callers/callees";
    case Mode::kThreads: return "threads";
    case Mode::kHelp: return "help";
  }
  return "";
}

// Cuts `text` to `width` bytes, or pads it to them. Never inside a UTF-8 sequence (a name
// may hold one): the cut backs off to the sequence's first byte.
std::string fit(std::string text, size_t width, bool pad) {
  if (text.size() > width) {
    size_t cut = width;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
  }
  if (pad && text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

}  // namespace

std::string App::title() const {
  std::string thread = "all threads";
  for (const ThreadChoice& t : threads_)
    if (t.tid == tid_ && tid_ != 0) thread = fmt::format("thread {}", t.tid);
  return fmt::format(" callmon tui: {}  [{}]  {}, {}   ?:help q:quit", recording_,
                     mode_name(mode_), thread,
                     report::count_of(data_->graph.total_calls, "call", "calls"));
}

std::string App::header() const {
  switch (mode_) {
    case Mode::kTree:
      return fmt::format("{:>{}}  {:>{}}  {:>{}}  Function (call path)", "Total", kFigure,
                         "Self", kFigure, "Calls", kCalls);
    case Mode::kFlat: {
      // The sort column's head is marked: "[Calls]".
      auto head = [&](analysis::SortKey k) {
        std::string name = FlatView::column_name(k);
        return flat_.sort_key() == k ? "[" + name + "]" : name;
      };
      using analysis::SortKey;
      return fmt::format("{:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {}",
                         head(SortKey::kTotal), kFigure, head(SortKey::kSelf), kFigure,
                         head(SortKey::kCalls), kCalls, head(SortKey::kAvg), kShort,
                         head(SortKey::kMin), kFigure, head(SortKey::kMax), kFigure,
                         head(SortKey::kName));
    }
    case Mode::kXref:
      return fmt::format("{:>{}}  {:>{}}  {:>{}}  Function", "Time", kFigure, "Self", kFigure,
                         "Calls", kCalls);
    case Mode::kThreads: return "Pick a thread (Enter), Esc to go back";
    case Mode::kHelp: return "Keys of callmon tui (Esc or ? closes this help)";
  }
  return "";
}

std::string App::row_text(size_t row) const {
  const analysis::CallGraph& g = data_->graph;
  switch (mode_) {
    case Mode::kTree: {
      const TreeRow& r = tree_.rows()[row];
      const analysis::ContextNode& c = g.contexts[r.node];
      const char* mark = !tree_.has_children(r.node) ? "  " : tree_.expanded(r.node) ? "- " : "+ ";
      std::string indent = r.depth <= kMaxIndent
                               ? std::string(2 * r.depth, ' ')
                               : fmt::format("{}({}) ", std::string(2 * kMaxIndent, ' '), r.depth);
      return fmt::format("{:>{}}  {:>{}}  {:>{}}  {}{}{}", figure(c.time_ns, c.time_range),
                         kFigure, figure(c.self_ns, c.self_range), kFigure, c.calls, kCalls,
                         indent, mark, g.functions[c.func].name);
    }
    case Mode::kFlat: {
      const analysis::FunctionRow& r = flat_.rows()[row];
      return fmt::format(
          "{:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {:>{}}  {}",
          report::human_figure(r.total_ns, r.total_lo_ns, r.total_hi_ns), kFigure,
          report::human_figure(r.self_ns, r.self_lo_ns, r.self_hi_ns), kFigure, r.calls, kCalls,
          report::human_duration(r.avg_ns()), kShort,
          report::human_figure(r.min_ns, r.min_lo_ns, r.min_hi_ns), kFigure,
          report::human_figure(r.max_ns, r.max_lo_ns, r.max_hi_ns), kFigure, r.name);
    }
    case Mode::kXref: {
      const XrefLine& l = xref_.lines()[row];
      switch (l.kind) {
        case XrefLine::Kind::kHeading: return fmt::format("{}:", l.heading);
        case XrefLine::Kind::kFunction: {
          const analysis::GraphFunction& f = g.functions[l.func];
          return fmt::format("{:>{}}  {:>{}}  {:>{}}  {}", figure(f.total_ns, f.total_range),
                             kFigure, figure(f.self_ns, f.self_range), kFigure, f.calls, kCalls,
                             f.name);
        }
        default:
          return fmt::format("{:>{}}  {:>{}}  {:>{}}      {}", figure(l.arc->time_ns, l.arc->time_range),
                             kFigure, figure(l.arc->self_ns, l.arc->self_range), kFigure,
                             l.arc->calls, kCalls, report::graph_name(g, l.func));
      }
    }
    case Mode::kThreads:
      return fmt::format("{} {}", threads_[row].tid == tid_ ? '*' : ' ', threads_[row].label);
    case Mode::kHelp: return help_lines()[row];
  }
  return "";
}

std::string App::status() const {
  if (prompting_) return "/" + prompt_;
  if (!message_.empty()) return message_;
  switch (mode_) {
    case Mode::kTree:
      return "Enter:fold  Left/Right  E:unfold all  C:fold all  g:callers/callees  "
             "/:search  r:flat  T:threads";
    case Mode::kFlat:
      return "s/S:sort column  Enter or g:callers/callees  /:search  t:tree  T:threads";
    case Mode::kXref:
      return "Enter:go to caller/callee (on the function: show it in the tree)  b:back  Esc:return";
    case Mode::kThreads: return "Enter:pick  Esc:return";
    case Mode::kHelp: return "Esc or ?:close help  q:quit";
  }
  return "";
}

std::vector<ScreenLine> App::render(size_t width, size_t height) {
  std::vector<ScreenLine> out;
  if (height == 0 || width == 0) return out;
  out.push_back({fit(title(), width, true), Style::kTitle});
  if (height == 1) return out;
  size_t body = height >= 3 ? height - 3 : 0;
  page_ = std::max<size_t>(body, 1);
  ListCursor& c = cur();
  c.set_count(row_count());
  if (height >= 3) {
    out.push_back({fit(" " + header(), width, true), Style::kHeader});
    size_t top = c.top(body);
    for (size_t i = 0; i < body; ++i) {
      size_t row = top + i;
      if (row >= c.count()) {
        out.push_back({"", Style::kNormal});
        continue;
      }
      bool at = row == c.pos();
      // A mark beside the cursor's row as well as its colours: it shows on any terminal.
      out.push_back({fit((at ? ">" : " ") + row_text(row), width, at),
                     at ? Style::kCursor : Style::kNormal});
    }
  }
  if (c.count() == 0 && body > 0 && mode_ != Mode::kHelp)
    out[2].text = fit(" (no calls)", width, false);
  out.push_back({fit(status(), width, true), Style::kStatus});
  return out;
}

}  // namespace callmon::tui
