// callmon's entry point: builds the command line from the registered subcommands, parses it
// and returns the subcommand's status. Only this file turns errors into exit codes.
#include <algorithm>
#include <cstdio>
#include <string>

#include "tools/callmon/command.hpp"
#include "tools/callmon/program_args.hpp"

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

namespace {

// CLI11 checks required options before it complains about unknown ones, so `callmon html
// --bogus` would say "--output is required". The first argument that `sub` does not know
// (before a "--"), to be named instead; empty when there is none.
std::string unknown_option(CLI::App* sub, int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    std::string name = arg.substr(0, arg.find('='));
    if (arg[1] != '-') name = arg.substr(0, 2);  // -oFILE, -d DIR
    if (name == "-h" || name == "--help") continue;
    if (sub->get_option_no_throw(name) == nullptr) return arg;
  }
  return "";
}

}  // namespace

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
  // Everything after the first `--` is the program's (program_args.hpp): CLI11 sees only
  // what comes before it when the command runs a program.
  int parsed_argc = argc;
  if (argc > 2 && argv[1][0] != '-') {
    CLI::App* sub = nullptr;
    for (CLI::App* c : app.get_subcommands([](CLI::App*) { return true; }))
      if (c->get_name() == argv[1]) sub = c;
    for (int i = 2; i < argc; ++i) {
      if (std::string(argv[i]) != "--") continue;
      if (take_program_tail(sub, std::vector<std::string>(argv + i + 1, argv + argc)))
        parsed_argc = i;
      break;
    }
  }
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::RequiredError& e) {
    CLI::App* sub = nullptr;
    for (CLI::App* c : app.get_subcommands([](CLI::App*) { return true; }))
      if (argc > 1 && c->get_name() == argv[1]) sub = c;
    std::string unknown = sub ? unknown_option(sub, argc, argv) : "";
    if (unknown.empty()) return app.exit(e) == 0 ? 0 : 2;
    std::fprintf(stderr, "callmon %s: error: unknown option %s (see --help)\n", argv[1],
                 unknown.c_str());
    return 2;
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return status;
}
