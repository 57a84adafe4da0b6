// The terminal side of the reading commands (docs/terminal.md): --no-pager and --color,
// and the pager their standard output goes through when it is a terminal, as git does.
//
// start_terminal() decides the colour (before the pager, which turns stdout into a pipe)
// and, when stdout is a terminal, starts `$CALLMON_PAGER`, else `$PAGER`, else
// `less -FRSX` (LESS=FRSX when unset and the default less runs), through /bin/sh, and
// points stdout (and stderr, when it is a terminal too, so error lines show inside the
// pager rather than under it) at it. At exit callmon flushes, closes its end and waits for
// the pager, so the shell's prompt comes after the pager has ended; callmon's exit status
// is its own, whatever the pager's.
//
// The user may quit the pager before the output is all written: SIGPIPE is caught then,
// stdout goes to /dev/null and stderr back to the terminal, so the command finishes
// quietly with its own status (no "Broken pipe", no death by signal). A SIGINT, SIGTERM or
// SIGHUP while paging waits for the pager to end before callmon dies of it, so the pager
// keeps the terminal until it is done with it.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace callmon::tools {

struct TerminalOptions {
  bool no_pager = false;
  std::string color = "auto";  // auto | always | never
};

// Adds --no-pager and (`colour`: for the commands that colour) --color=auto|always|never
// to a subcommand.
void add_terminal_options(CLI::App* sub, TerminalOptions& o, bool colour = true);

// Whether to colour: always/never as asked; auto colours when stdout is a terminal,
// NO_COLOR is unset or empty and TERM is not "dumb". Call before start_pager().
bool use_colour(const TerminalOptions& o);

// The pager command to run for `env` values (CALLMON_PAGER, PAGER; nullptr: unset); empty
// when paging is off: "" or "cat" disables. Unset both: "less -FRSX" when less is found in
// PATH, else empty.
std::string pager_command(const char* callmon_pager, const char* pager);

// Starts the pager when stdout is a terminal, paging is not off and --no-pager was not
// given; does nothing otherwise (and when the pager cannot be started: output goes to the
// terminal as it would without it). Call once, after the command's argument checks (so a
// usage error is not paged) and before its output.
void start_pager(const TerminalOptions& o);

// Both of the above, for the commands: returns use_colour(o).
bool start_terminal(const TerminalOptions& o);

// True once the user quit the pager before callmon's output was all written.
bool pager_quit();

// Flushes stdout: 0, or (stdout refused the output, and not because the pager was quit)
// prints "callmon CMD: error: cannot write the output" and returns 1.
int finish_stdout(const std::string& command);

}  // namespace callmon::tools
