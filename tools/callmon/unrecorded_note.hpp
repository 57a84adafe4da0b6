// The end of `callmon record`: says which instrumented modules the program loaded where the
// runtime could not record them (dlmopen into another namespace; analysis/unrecorded_modules.hpp).
#pragma once

#include <string>

namespace callmon::tools {

// Prints one warning for `command` when the recording in `dir` names such modules; nothing
// otherwise, nor when the recording cannot be read (the other commands will say why).
void warn_unrecorded_modules(const std::string& command, const std::string& dir);

}  // namespace callmon::tools
