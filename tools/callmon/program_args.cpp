// The program arguments of the commands that run a program: see program_args.hpp.
#include "tools/callmon/program_args.hpp"

#include <map>

namespace callmon::tools {
namespace {

struct ProgramSlot {
  CLI::Option* option;
  std::vector<std::string>* command;
};

std::map<const CLI::App*, ProgramSlot>& slots() {
  static std::map<const CLI::App*, ProgramSlot> by_command;
  return by_command;
}

}  // namespace

CLI::Option* add_program_option(CLI::App* sub, std::vector<std::string>& command,
                                const std::string& description, bool required) {
  // Positionals before `--` come first: `callmon record ./prog -- -n` runs `./prog -n`.
  CLI::Option* option = sub->add_option_function<std::vector<std::string>>(
      "command",
      [&command](const std::vector<std::string>& given) {
        command.insert(command.begin(), given.begin(), given.end());
      },
      description);
  option->type_name("PROG [ARGS...]");
  if (required) option->required();
  slots()[sub] = {option, &command};
  return option;
}

bool take_program_tail(const CLI::App* sub, const std::vector<std::string>& tail) {
  auto it = slots().find(sub);
  if (it == slots().end()) return false;
  *it->second.command = tail;
  // An empty tail (`-- ` alone) still leaves the program missing: keep the requirement.
  if (!tail.empty()) it->second.option->required(false);
  return true;
}

}  // namespace callmon::tools
