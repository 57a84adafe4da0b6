// `callmon run --monitor TOOL.so [--monitor-option KEY=VALUE]... -- PROG [ARGS...]`: runs an
// instrumented program with libcallmon.so preloaded in monitor mode, so every call goes to
// the monitor in TOOL.so (include/callmon/monitor.hpp, docs/api.md). Nothing is recorded;
// the program keeps its stdio and signals and callmon exits with its status.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/elf_image.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/program_args.hpp"
#include "tools/callmon/monitor_launch.hpp"
#include "tools/callmon/privileged_program.hpp"
#include "tools/callmon/program_launch.hpp"
#include "tools/callmon/tsc_clock.hpp"
#include "tools/callmon/patch_options.hpp"

namespace callmon::tools {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFactory = "callmon_monitor_create_v1";
constexpr const char* kFactoryPrefix = "callmon_monitor_create_v";

struct RunOptions {
  std::string monitor;
  std::vector<std::string> monitor_options;
  std::string clock = "auto";
  PatchOptions patching;  // --patch, --patch-module: unmodified code monitored too
  std::vector<std::string> command;
};

// Checks, before anything runs, that `path` is an ELF file defining the factory of the API
// version this runtime loads. Returns the absolute path (the program may change directory
// before its first call, and dlopen would search the library path for a bare name).
Result<std::string> check_monitor(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Error{"monitor " + path + ": no such file"};
  if (!fs::is_regular_file(path, ec)) return Error{"monitor " + path + ": not a regular file"};
  auto image = analysis::ElfImage::open(path);
  if (!image) return Error{"monitor " + path + ": not an ELF shared object (" + image.error() + ")"};
  bool found = false;
  std::string other;
  for (const auto& sym : (*image)->symbols()) {
    if (sym.name == kFactory) found = true;
    else if (sym.name.rfind(kFactoryPrefix, 0) == 0) other = sym.name;
  }
  if (!found && !other.empty())
    return Error{"monitor " + path + " was built for another API version (" + other +
                 "; this callmon loads " + kFactory + ")"};
  if (!found)
    return Error{"monitor " + path + " has no " + kFactory +
                 " (register the monitor class with CALLMON_MONITOR(Class))"};
  return fs::absolute(path, ec).lexically_normal().string();
}

// The --monitor-option KEY=VALUE arguments as pairs (monitor_env checks for newlines).
Result<MonitorOptions> option_pairs(const std::vector<std::string>& args) {
  MonitorOptions pairs;
  for (const auto& p : args) {
    size_t eq = p.find('=');
    if (eq == std::string::npos || eq == 0)
      return Error{"--monitor-option '" + p + "' is not KEY=VALUE"};
    pairs.emplace_back(p.substr(0, eq), p.substr(eq + 1));
  }
  return pairs;
}

int run_monitored(const RunOptions& o) {
  const std::string cmd = "run";
  const TscStart tsc_start = tsc_measure_start();
  if (o.command.empty())
    return fail(cmd, "no program given: callmon run --monitor TOOL.so -- PROG [ARGS...]", 2);
  auto monitor = check_monitor(o.monitor);
  if (!monitor) return fail(cmd, monitor.error(), 2);
  auto options = option_pairs(o.monitor_options);
  if (!options) return fail(cmd, options.error(), 2);
  if (auto bad = patch_options_error(o.patching)) return fail(cmd, *bad, 2);
  auto program = resolve_program(o.command[0]);
  if (!program) return fail(cmd, program.error(), 127);
  if (auto refused = preload_refusal(*program, o.command[0])) return fail(cmd, *refused);
  auto lib = find_runtime();
  if (!lib) return fail(cmd, lib.error());
  auto env = monitor_env(*lib, *monitor, *options);
  if (!env) return fail(cmd, env.error(), 2);
  env->push_back("CALLMON_CLOCK=" + o.clock);
  add_patch_env(o.patching, *env);
  if (o.clock != "monotonic") {
    double hz = tsc_measure_finish(tsc_start);
    if (hz > 0) env->push_back("CALLMON_TSC_HZ=" + std::to_string(hz));
  }
  auto ended = run_program(*program, o.command, *env);
  if (!ended) return fail(cmd, ended.error(), 127);
  return ended->status;
}

CommandRegistration registration_run{"run", [](CLI::App& app, int& status) {
  auto* sub = app.add_subcommand(
      "run", "Run a program with every instrumented call going to a monitor (no recording)");
  auto o = std::make_shared<RunOptions>();
  sub->add_option("--monitor", o->monitor,
                  "Shared library of a monitor written on include/callmon/monitor.hpp")
      ->required();
  sub->add_option("--monitor-option", o->monitor_options,
                  "KEY=VALUE passed to the monitor (callmon::option(\"KEY\")); repeatable")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("--clock", o->clock, "Tick source: auto (TSC when invariant), tsc, monotonic")
      ->check(CLI::IsMember({"auto", "tsc", "monotonic"}))
      ->capture_default_str();
  add_patch_options(sub, o->patching, "monitor them");
  add_program_option(sub, o->command, "PROG [ARGS...] (put -- before PROG)", true);
  sub->footer("Example: callmon run --monitor build/lib/callmon-profiler.so -- ./fib 30\n"
              "The program keeps its stdin, stdout, stderr and signals; callmon exits with its "
              "status (128+signal if it was killed). See docs/api.md.");
  sub->callback([o, &status] { status = run_monitored(*o); });
}};

}  // namespace
}  // namespace callmon::tools
