// The shared cursor and scroll position (list_cursor.hpp).
#include "tui/list_cursor.hpp"

namespace callmon::tui {

void ListCursor::set_count(size_t count) {
  count_ = count;
  set(pos_);
  if (top_ > pos_) top_ = pos_;
}

void ListCursor::set(size_t row) { pos_ = count_ == 0 ? 0 : (row < count_ ? row : count_ - 1); }

void ListCursor::move(long delta) {
  if (delta < 0) {
    size_t up = static_cast<size_t>(-delta);
    set(up > pos_ ? 0 : pos_ - up);
  } else {
    set(pos_ + static_cast<size_t>(delta));
  }
}

size_t ListCursor::top(size_t height) {
  if (height == 0) return top_;
  if (pos_ < top_) top_ = pos_;
  if (pos_ >= top_ + height) top_ = pos_ - height + 1;
  return top_;
}

}  // namespace callmon::tui
