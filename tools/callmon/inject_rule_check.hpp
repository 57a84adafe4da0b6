// The start-up check of `callmon inject`'s rules against the program: a rule that can act on
// no function of the program is silent at run time, so each one is named before the program
// runs, with the reason (no such function, only functions without a callmon hook, only
// inlined copies).
#pragma once

#include <string>
#include <vector>

#include "tools/inject/inject_config.hpp"

namespace callmon::tools {

// One sentence per rule of `rules` (read from `config`) that matches no hooked function of
// the executable `program`, naming the rule by file and line and saying why; empty when every
// rule has a function to act on, or `program` cannot be read (the run reports that).
std::vector<std::string> idle_rule_warnings(const std::vector<inject::Rule>& rules,
                                            const std::string& program,
                                            const std::string& config);

}  // namespace callmon::tools
