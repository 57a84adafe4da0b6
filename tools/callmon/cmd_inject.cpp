// `callmon inject --config FILE [--log FILE] -- PROG [ARGS...]`: the error simulator. Checks
// the config (errors name the file and line) and that the program's hook mode can do what
// it asks, then runs PROG under the injection monitor (tools/inject/inject_monitor.cpp);
// exits with PROG's status (docs/inject.md).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tools/callmon/command.hpp"
#include "tools/callmon/program_args.hpp"
#include "tools/callmon/program_elf.hpp"
#include "tools/callmon/inject_rule_check.hpp"
#include "tools/callmon/monitor_launch.hpp"
#include "tools/callmon/privileged_program.hpp"
#include "tools/callmon/program_launch.hpp"
#include "tools/inject/inject_config.hpp"

namespace callmon::tools {
namespace {

namespace fs = std::filesystem;

struct InjectOptions {
  std::string config;
  std::string log;  // empty: standard error
  bool shared = false;  // --shared: the log file readable by everyone (0644)
  std::vector<std::string> command;
};

// The hook mode the monitor is told: it decides how an action reaches the function.
const char* mode_name(const HookProbes& p) {
  if (p.fentry) return "fentry";
  if (p.mcount) return "pg";
  if (p.cyg) return "cyg";
  return p.xray ? "xray" : "cyg";
}

// The hook runs at the function's first instruction, where the body can be skipped.
bool hook_at_entry(const HookProbes& p) { return (p.fentry || p.xray) && !p.mcount && !p.cyg; }

// Refuses rules the program's hook mode cannot carry out (before it starts).
Status check_mode(const std::vector<inject::Rule>& rules, const HookProbes& p,
                  const std::string& config, const std::string& program) {
  for (auto& r : rules) {
    if (r.action == inject::Action::kReturn && !hook_at_entry(p))
      return Error{config + ":" + std::to_string(r.line) + ": a return-value rule needs a "
                   "program built with -pg -mfentry or XRay sleds, where the hook runs at the "
                   "function's first instruction and the body can be skipped; " + program +
                   " is built with " + describe_probes(p) +
                   ", where the hook runs after the function's prologue"};
    if (r.action == inject::Action::kThrow && p.mcount)
      return Error{config + ":" + std::to_string(r.line) + ": throw rules are not supported "
                   "for programs built with -pg (mcount); use -pg -mfentry or "
                   "-finstrument-functions"};
  }
  if (!p.fentry && !p.mcount && !p.cyg && !p.xray)
    return Error{program + " has no callmon hook (build it with -finstrument-functions, "
                 "-pg -mfentry or clang's -fxray-instrument); nothing could be injected"};
  return ok_status();
}

int run_inject(const InjectOptions& o) {
  const std::string cmd = "inject";
  if (o.command.empty())
    return fail(cmd, "no program given: callmon inject --config FILE -- PROG [ARGS...]", 2);
  auto rules = inject::load_config(o.config);
  if (!rules) return fail(cmd, rules.error(), 2);
  auto program = resolve_program(o.command[0]);
  if (!program) return fail(cmd, program.error(), 127);
  if (auto refused = preload_refusal(*program, o.command[0])) return fail(cmd, *refused);
  auto elf = read_program_elf(*program);
  if (!elf) return fail(cmd, elf.error());
  if (auto st = check_mode(*rules, elf->probes, o.config, o.command[0]); !st)
    return fail(cmd, st.error(), 2);
  // A rule with nothing to act on is silent at run time: say so now.
  for (const std::string& w : idle_rule_warnings(*rules, *program, o.config)) warn(cmd, w);
  auto runtime = find_runtime();
  if (!runtime) return fail(cmd, runtime.error());
  auto monitor = find_callmon_library("callmon-inject.so", "CALLMON_INJECT_LIB");
  if (!monitor) return fail(cmd, monitor.error());

  auto log = inheritable_output(o.log, "the log", o.shared ? 0644 : 0600);
  if (!log) return fail(cmd, log.error());

  std::error_code ec;
  MonitorOptions mo{{"config", fs::absolute(o.config, ec).string()},
                    {"log_fd", std::to_string(*log)},
                    {"mode", mode_name(elf->probes)}};
  auto env = monitor_env(*runtime, *monitor, mo);
  if (!env) return fail(cmd, env.error(), 2);
  auto ended = run_program(*program, o.command, *env);
  if (!ended) return fail(cmd, ended.error(), 127);
  return ended->status;
}

CommandRegistration registration_inject{"inject", [](CLI::App& app, int& status) {
  auto* sub = app.add_subcommand("inject", "Run a program and inject errors into its calls as a config asks");
  auto o = std::make_shared<InjectOptions>();
  sub->add_option("-c,--config", o->config, "The rules: PATTERN TRIGGER ACTION per line (docs/inject.md)")
      ->required();
  sub->add_option("--log", o->log, "Write the log of injections to FILE (default: standard error)");
  sub->add_flag("--shared", o->shared,
                "Let everyone read the --log file (0644); without it only you can (0600)");
  add_program_option(sub, o->command, "PROG [ARGS...] (put -- before PROG)", true);
  sub->footer("Example rule: open_db call=3 throw system_error ENOENT \"no database\"\n"
              "Each injection is logged as one line (rule, function, thread, call number). "
              "The program keeps its stdin, stdout, stderr and signals; callmon exits with its "
              "status (128+signal if it was killed).");
  sub->callback([o, &status] { status = run_inject(*o); });
}};

}  // namespace
}  // namespace callmon::tools
