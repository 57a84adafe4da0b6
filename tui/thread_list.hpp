// The entries of the tui's thread picker: every thread together, then each thread of each
// process of the recording.
#pragma once

#include <vector>

#include "format/recording.hpp"
#include "tui/tui_data.hpp"

namespace callmon::tui {

// "all threads" first (tid 0), then "pid P  tid T  EXE" per thread file in recording order;
// a thread recorded in several files (restarts) is listed once.
std::vector<ThreadChoice> thread_choices(const format::Recording& rec);

}  // namespace callmon::tui
