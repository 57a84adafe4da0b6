// The terminal side of the tui: ncurses set-up and tear-down, painting App::render()'s
// lines and translating curses keys into the App's key codes. Nothing else lives here.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "tui/app_model.hpp"

namespace callmon::tui {

// Computes the data of thread `tid` (0: all) into `out`; an error message when it cannot.
using ThreadLoader = std::function<std::optional<std::string>(uint32_t tid, TuiData& out)>;

// Runs the interactive loop on the terminal until the user quits; the terminal is restored
// on the way out, also when an exception passes through. stdin and stdout must be a
// terminal. Returns the exit status: 0, or 1 when the terminal went away.
int run_terminal(App& app, const ThreadLoader& load);

}  // namespace callmon::tui
