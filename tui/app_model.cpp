// Key handling and state changes of the tui (app_model.hpp); rendering is app_render.cpp.
#include "tui/app_model.hpp"

#include <algorithm>

#include "tui/help_text.hpp"

namespace callmon::tui {
namespace {

std::string function_key(const std::string& name, const std::string& module) {
  return name + '\0' + module;
}

}  // namespace

App::App(std::string recording, std::vector<ThreadChoice> threads)
    : recording_(std::move(recording)), threads_(std::move(threads)),
      data_(std::make_unique<TuiData>()) {
  if (threads_.empty()) threads_.push_back({0, "all threads"});
  threads_cur_.set_count(threads_.size());
  help_cur_.set_count(help_lines().size());
}

void App::set_data(TuiData data, uint32_t tid) {
  data_ = std::make_unique<TuiData>(std::move(data));
  tid_ = tid;
  requested_tid_ = tid;
  func_by_key_.clear();
  const auto& funcs = data_->graph.functions;
  for (uint32_t i = 0; i < funcs.size(); ++i)
    func_by_key_.emplace(function_key(funcs[i].name, funcs[i].module), i);
  tree_ = TreeView(&data_->graph);
  flat_ = FlatView(data_->profile.functions);
  xref_.set_graph(&data_->graph);
  tree_cur_ = ListCursor();
  flat_cur_ = ListCursor();
  xref_cur_ = ListCursor();
  tree_cur_.set_count(tree_.rows().size());
  flat_cur_.set_count(flat_.rows().size());
  mode_ = Mode::kTree;
  overlay_return_ = Mode::kTree;
  xref_return_ = Mode::kTree;
}

ListCursor& App::cur() {
  switch (mode_) {
    case Mode::kTree: return tree_cur_;
    case Mode::kFlat: return flat_cur_;
    case Mode::kXref: return xref_cur_;
    case Mode::kThreads: return threads_cur_;
    case Mode::kHelp: return help_cur_;
  }
  return tree_cur_;
}

size_t App::cursor() const { return cur().pos(); }

size_t App::row_count() const {
  switch (mode_) {
    case Mode::kTree: return tree_.rows().size();
    case Mode::kFlat: return flat_.rows().size();
    case Mode::kXref: return xref_.lines().size();
    case Mode::kThreads: return threads_.size();
    case Mode::kHelp: return help_lines().size();
  }
  return 0;
}

uint32_t App::function_at_cursor() const {
  size_t pos = cursor();
  switch (mode_) {
    case Mode::kTree:
      if (pos < tree_.rows().size()) return data_->graph.contexts[tree_.rows()[pos].node].func;
      break;
    case Mode::kFlat:
      if (pos < flat_.rows().size()) {
        const auto& r = flat_.rows()[pos];
        auto it = func_by_key_.find(function_key(r.name, r.module));
        if (it != func_by_key_.end()) return it->second;
      }
      break;
    case Mode::kXref:
      if (pos < xref_.lines().size()) return xref_.lines()[pos].func;
      break;
    default: break;
  }
  return analysis::kGraphRoot;
}

void App::switch_mode(Mode mode) {
  if (mode == mode_) return;
  if (mode == Mode::kHelp || mode == Mode::kThreads) {
    if (mode_ != Mode::kHelp && mode_ != Mode::kThreads) overlay_return_ = mode_;
  } else if (mode == Mode::kXref) {
    if (mode_ == Mode::kTree || mode_ == Mode::kFlat) xref_return_ = mode_;
  }
  mode_ = mode;
}

void App::open_xref(uint32_t func) {
  if (func == analysis::kGraphRoot) return;
  xref_.show(func);
  xref_cur_.set_count(xref_.lines().size());
  xref_cur_.set(xref_.function_line());
  switch_mode(Mode::kXref);
}

bool App::handle_move(int key) {
  ListCursor& c = cur();
  long page = static_cast<long>(std::max<size_t>(page_, 1));
  switch (key) {
    case kKeyUp: case 'k': c.move(-1); return true;
    case kKeyDown: case 'j': c.move(1); return true;
    case kKeyPageUp: c.move(-page); return true;
    case kKeyPageDown: c.move(page); return true;
    case kKeyHome: c.set(0); return true;
    case kKeyEnd: c.set(c.count() == 0 ? 0 : c.count() - 1); return true;
    default: return false;
  }
}

Action App::handle(int key) {
  message_.clear();
  if (prompting_) return handle_prompt(key);
  if (key == 'q') return Action::kQuit;
  if (mode_ == Mode::kHelp) {
    if (key == '?' || key == kKeyEscape) {
      mode_ = overlay_return_;
      return Action::kNone;
    }
    handle_move(key);
    return Action::kNone;
  }
  switch (key) {
    case '?': switch_mode(Mode::kHelp); return Action::kNone;
    case 'T': switch_mode(Mode::kThreads); return Action::kNone;
    case 't': mode_ = Mode::kTree; return Action::kNone;
    case 'r': mode_ = Mode::kFlat; return Action::kNone;
    case kKeyTab:
      mode_ = mode_ == Mode::kTree ? Mode::kFlat
              : mode_ == Mode::kFlat && !xref_.empty() ? Mode::kXref
                                                       : Mode::kTree;
      return Action::kNone;
    case '/':
      prompting_ = true;
      prompt_.clear();
      return Action::kNone;
    case 'n': search_next(1); return Action::kNone;
    case 'N': search_next(-1); return Action::kNone;
    case 'g': open_xref(function_at_cursor()); return Action::kNone;
    default: break;
  }
  if (handle_move(key)) return Action::kNone;
  switch (mode_) {
    case Mode::kTree: handle_tree(key); break;
    case Mode::kFlat: handle_flat(key); break;
    case Mode::kXref: handle_xref(key); break;
    case Mode::kThreads: return handle_threads(key);
    case Mode::kHelp: break;
  }
  return Action::kNone;
}

Action App::handle_prompt(int key) {
  if (key == kKeyEscape) {
    prompting_ = false;
  } else if (key == kKeyBackspace) {
    if (!prompt_.empty()) prompt_.pop_back();
  } else if (key == kKeyEnter) {
    prompting_ = false;
    if (prompt_.empty()) return Action::kNone;  // keeps the previous pattern
    if (auto error = search_.set(prompt_)) {
      message_ = *error;
      return Action::kNone;
    }
    search_next(1);
  } else if (key >= 0x20 && key < 0x7f) {
    prompt_ += static_cast<char>(key);
  }
  return Action::kNone;
}

void App::handle_tree(int key) {
  size_t pos = tree_cur_.pos();
  const auto& rows = tree_.rows();
  if (pos >= rows.size()) return;
  uint32_t node = rows[pos].node;
  switch (key) {
    case kKeyEnter: case ' ': tree_.toggle(pos); break;
    case kKeyRight: case 'l': case '+':
      if (tree_.expanded(node) && tree_.has_children(node)) {
        tree_cur_.set(pos + 1);
      } else {
        tree_.expand(pos);
      }
      break;
    case kKeyLeft: case 'h': case '-':
      if (tree_.expanded(node) && tree_.has_children(node)) {
        tree_.collapse(pos);
      } else {
        tree_cur_.set_count(rows.size());
        tree_cur_.set(tree_.parent_row(pos));
      }
      break;
    case 'E':
      if (!tree_.expand_all(pos))
        message_ = "unfolded the first " + std::to_string(TreeView::kExpandLimit) +
                   " rows; E again on a row below unfolds more";
      break;
    case 'C':
      tree_.collapse_all();
      tree_cur_.set(0);
      break;
    case 's': case 'S': message_ = "sorting is in the flat profile (r); the tree is by time"; break;
    default: break;
  }
  tree_cur_.set_count(tree_.rows().size());
}

void App::show_in_tree(uint32_t func) {
  const auto& ctx = data_->graph.contexts;
  uint32_t best = 0;
  for (uint32_t n = 1; n < ctx.size(); ++n)
    if (ctx[n].func == func && (best == 0 || ctx[n].time_ns > ctx[best].time_ns)) best = n;
  if (best == 0) return;
  size_t row = tree_.reveal(best);
  tree_cur_.set_count(tree_.rows().size());
  tree_cur_.set(row);
  mode_ = Mode::kTree;
}

void App::handle_flat(int key) {
  switch (key) {
    case 's': flat_.next_sort(1); break;
    case 'S': flat_.next_sort(-1); break;
    case kKeyEnter: open_xref(function_at_cursor()); break;
    default: break;
  }
}

void App::handle_xref(int key) {
  switch (key) {
    case kKeyEnter: {
      size_t pos = xref_cur_.pos();
      if (pos >= xref_.lines().size()) break;
      const XrefLine& line = xref_.lines()[pos];
      if (line.kind == XrefLine::Kind::kHeading || line.func == analysis::kGraphRoot) break;
      if (line.kind == XrefLine::Kind::kFunction) {
        show_in_tree(line.func);
      } else {
        open_xref(line.func);
      }
      break;
    }
    case kKeyBackspace: case 'b':
      if (xref_.back()) {
        xref_cur_.set_count(xref_.lines().size());
        xref_cur_.set(xref_.function_line());
      } else {
        message_ = "no function before this one";
      }
      break;
    case kKeyEscape: mode_ = xref_return_; break;
    default: break;
  }
}

Action App::handle_threads(int key) {
  if (key == kKeyEscape) {
    mode_ = overlay_return_;
    return Action::kNone;
  }
  if (key != kKeyEnter) return Action::kNone;
  // A new thread's data opens in the tree (set_data()); the same thread's stays as it was.
  mode_ = overlay_return_;
  uint32_t tid = threads_[threads_cur_.pos()].tid;
  if (tid == tid_) return Action::kNone;
  requested_tid_ = tid;
  return Action::kLoadThread;
}

void App::search_next(int step) {
  if (!search_.active()) {
    message_ = "no search yet: type / and a regex";
    return;
  }
  std::optional<size_t> hit;
  size_t pos = cursor();
  switch (mode_) {
    case Mode::kTree: {
      // Every context, folded ones too, in the order of the unfolded tree.
      std::vector<uint32_t> order = tree_.preorder();
      size_t from = 0;
      if (pos < tree_.rows().size()) {
        uint32_t node = tree_.rows()[pos].node;
        from = static_cast<size_t>(std::find(order.begin(), order.end(), node) - order.begin());
      }
      const auto& g = data_->graph;
      auto found = search_.find(order.size(), from, step, [&](size_t i) -> const std::string& {
        return g.functions[g.contexts[order[i]].func].name;
      });
      if (found) {
        hit = tree_.reveal(order[*found]);
        tree_cur_.set_count(tree_.rows().size());
      }
      break;
    }
    case Mode::kFlat:
      hit = search_.find(flat_.rows().size(), pos, step,
                         [&](size_t i) -> const std::string& { return flat_.rows()[i].name; });
      break;
    case Mode::kXref: {
      static const std::string none;
      const auto& g = data_->graph;
      hit = search_.find(xref_.lines().size(), pos, step, [&](size_t i) -> const std::string& {
        uint32_t f = xref_.lines()[i].func;
        return f == analysis::kGraphRoot ? none : g.functions[f].name;
      });
      break;
    }
    case Mode::kThreads:
      hit = search_.find(threads_.size(), pos, step,
                         [&](size_t i) -> const std::string& { return threads_[i].label; });
      break;
    case Mode::kHelp:
      hit = search_.find(help_lines().size(), pos, step,
                         [&](size_t i) -> const std::string& { return help_lines()[i]; });
      break;
  }
  if (hit) {
    cur().set(*hit);
  } else {
    message_ = "not found: " + search_.pattern();
  }
}

}  // namespace callmon::tui
