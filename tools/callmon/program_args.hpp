// The program a command runs (`callmon record -- PROG [ARGS...]`): everything after the
// first `--` belongs to the program, whatever option comes before it. CLI11 lets an option
// that takes several values end its list with `--` and eats that `--` (App.hpp, "Allow --
// to end an unlimited list"), so `--select f -- prog -n` would hand `-n` to callmon. main.cpp
// therefore cuts argv at the first `--` itself and gives the tail to the command here.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace callmon::tools {

// Adds the positional "command" to `sub`, bound to `command`: PROG [ARGS...] given after
// `--` (filled by main.cpp before parsing) or, without `--`, as plain positionals. `required`
// holds when neither is given.
CLI::Option* add_program_option(CLI::App* sub, std::vector<std::string>& command,
                                const std::string& description, bool required);

// For main.cpp: when `sub` takes a program, stores `tail` (the arguments after `--`) as its
// program and returns true; false when `sub` takes no program (argv is then parsed whole).
bool take_program_tail(const CLI::App* sub, const std::vector<std::string>& tail);

}  // namespace callmon::tools
