// The subcommand registry: each cmd_*.cpp file owns its options and registers itself with
// a static CommandRegistration, so main.cpp never changes when a command is added.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace callmon::tools {

// Adds one subcommand to `app`. The subcommand's callback stores its exit status in
// `status`; errors are printed by the command as one line on stderr.
using CommandSetup = std::function<void(CLI::App& app, int& status)>;

struct CommandInfo {
  std::string name;
  CommandSetup setup;
};

std::vector<CommandInfo>& command_registry();

struct CommandRegistration {
  CommandRegistration(std::string name, CommandSetup setup) {
    command_registry().push_back({std::move(name), std::move(setup)});
  }
};

// Prints "callmon <cmd>: error: <message>" on stderr and returns the status for errors (2
// for usage, 1 otherwise), so every command words its failures the same way.
int fail(const std::string& command, const std::string& message, int status = 1);
void warn(const std::string& command, const std::string& message);

}  // namespace callmon::tools
