// The text of the tui's help screen (`?`), one line per entry.
#pragma once

#include <string>
#include <vector>

namespace callmon::tui {

const std::vector<std::string>& help_lines();

}  // namespace callmon::tui
