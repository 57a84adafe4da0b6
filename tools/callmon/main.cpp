// callmon's entry point: builds the command line from the registered subcommands, parses it
// and returns the subcommand's status. Only this file turns errors into exit codes.
#include <algorithm>
#include <cstdio>
#include <string>

#include "tools/callmon/command.hpp"

namespace callmon::tools {

std::vector<CommandInfo>& command_registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}

int fail(const std::string& command, const std::string& message, int status) {
  std::fprintf(stderr, "callmon %s: error: %s\n", command.c_str(), message.c_str());
  return status;
}

void warn(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "callmon %s: warning: %s\n", command.c_str(), message.c_str());
}

}  // namespace callmon::tools

int main(int argc, char** argv) {
  using namespace callmon::tools;
  CLI::App app{"callmon: a function-call monitor and profiler for C and C++ programs"};
  app.name("callmon");
  app.set_version_flag("--version", CALLMON_VERSION);
  app.require_subcommand(1);
  // One clear line for every usage error, whatever CLI11 would print.
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    std::string name = failed && failed->get_parent() ? failed->get_name() : "";
    return std::string("callmon") + (name.empty() ? "" : " " + name) + ": error: " + e.what() +
           " (see --help)\n";
  });
  auto& registry = command_registry();
  std::sort(registry.begin(), registry.end(),
            [](const CommandInfo& a, const CommandInfo& b) { return a.name < b.name; });
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (auto& command : registry) {
      known = known || command.name == argv[1];
      names += (names.empty() ? "" : ", ") + command.name;
    }
    if (!known) {
      std::fprintf(stderr, "callmon: error: unknown command '%s' (commands: %s; see --help)\n",
                   argv[1], names.c_str());
      return 2;
    }
  }
  int status = 0;
  for (auto& command : registry) command.setup(app, status);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return status;
}
