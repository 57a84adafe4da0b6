// How text outputs show function names (--demangle=full|short|no) and how they fit long
// notes to the screen. The style is chosen once per command, by the command line, before
// anything is rendered (set_name_style); every text renderer asks shown_name() or
// shown_row_names() rather than printing a recorded name as it is. JSON and CSV keep the
// full names (JSON adds the short one beside).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/cxx_names.hpp"

namespace callmon::report {

// The style of this run of the command (default: short). NameStyle::mangled also makes
// the symbolizer keep names as the object files spell them (analysis::set_mangled_names).
void set_name_style(analysis::NameStyle style);
analysis::NameStyle name_style();

// `name` (a symbolizer name) as the chosen style shows it.
std::string shown_name(const std::string& name);

// Labels for table rows named `names` (one per row, rows being distinct functions): the
// style's names, with colliding short labels told apart (analysis::row_labels).
std::vector<std::string> shown_row_names(const std::vector<std::string>& names);

// The width notes are fitted to: the terminal's columns when stdout is a terminal,
// otherwise 100.
size_t note_width();

// "# note: TEXT" as lines of at most `width` columns (a word longer than that stands on a
// line of its own), continuation lines indented "#   ", each ending in '\n'.
std::string note_lines(const std::string& text, size_t width);

}  // namespace callmon::report
