// A cursor over a list of rows and the scroll position of a window onto it: the state every
// view of the tui shares (move, page, jump, keep the cursor on screen).
#pragma once

#include <cstddef>

namespace callmon::tui {

class ListCursor {
 public:
  // Sets the number of rows; the cursor and the top row are clamped into it.
  void set_count(size_t count);
  size_t count() const { return count_; }
  // The row under the cursor (0 when the list is empty).
  size_t pos() const { return pos_; }
  // Puts the cursor on `row` (clamped).
  void set(size_t row);
  // Moves the cursor by `delta` rows, stopping at either end.
  void move(long delta);
  // The first row of a window of `height` rows that shows the cursor: the previous top row
  // when the cursor is still inside it, else the nearest one that shows it.
  size_t top(size_t height);

 private:
  size_t count_ = 0;
  size_t pos_ = 0;
  size_t top_ = 0;
};

}  // namespace callmon::tui
