// `callmon monitor`: the execution monitor. Runs an unmodified program (or attaches to a
// running process) under ptrace with breakpoints at its function entries or statement
// starts, then prints hit counts per function, a counted source listing, or JSON.
#include <signal.h>
#include <sys/time.h>

#include <cstdio>
#include <memory>
#include <optional>

#include "monitor/monitor.hpp"
#include "monitor/render.hpp"
#include "tools/callmon/command.hpp"
#include "tools/callmon/program_args.hpp"
#include "tools/callmon/name_option.hpp"
#include "tools/callmon/output_file.hpp"
#include "tools/callmon/program_launch.hpp"

namespace callmon::tools {
namespace {

struct MonitorCmdOptions {
  bool lines = false;
  bool functions = false;
  std::vector<std::string> select;
  bool one_shot = false;
  bool timing = false;
  bool histogram = false;
  bool all = false;
  bool all_modules = false;
  bool follow_fork = false;
  bool follow_exec = false;
  bool single_step = false;
  std::string output;
  std::string format = "text";
  std::string demangle = "short";
  int pid = 0;
  double duration = 0;
  std::vector<std::string> command;
};

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_stop_signal(int) { g_stop = 1; }
extern "C" void on_tick(int) {}

// Attach mode ends on SIGINT/SIGTERM or after --duration. Both must interrupt the tracer's
// blocking waitpid, which only EINTR does: handlers without SA_RESTART, and a 100 ms
// interval timer so a flag set just before waitpid blocks is still seen promptly.
void install_attach_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
  sa.sa_handler = on_tick;
  sigaction(SIGALRM, &sa, nullptr);
  itimerval tick{{0, 100000}, {0, 100000}};
  setitimer(ITIMER_REAL, &tick, nullptr);
}

int run_monitor(const MonitorCmdOptions& o) {
  const std::string cmd = "monitor";
  if (o.pid == 0 && o.command.empty())
    return fail(cmd, "give a program to run (-- PROG [ARGS...]) or a process (-p PID)", 2);
  if (o.pid != 0 && !o.command.empty())
    return fail(cmd, "-p PID and a program to run exclude each other", 2);
  if (o.pid < 0) return fail(cmd, "bad process id " + std::to_string(o.pid), 2);
  if (o.duration != 0 && o.pid == 0) return fail(cmd, "--duration needs -p PID", 2);
  if (o.histogram && !o.lines) return fail(cmd, "--histogram needs --lines", 2);

  // Created before the program runs: a bad path must not cost the report of a long run.
  // Without -o the report goes to stderr, not into the program's own standard output.
  std::optional<OutputFile> out =
      o.output.empty() ? std::nullopt : OutputFile::open(cmd, o.output);
  if (!o.output.empty() && !out) return 1;

  monitor::MonitorOptions mo;
  mo.lines = o.lines;
  mo.select = o.select;
  mo.one_shot = o.one_shot;
  mo.timing = o.timing;
  mo.all_modules = o.all_modules;
  mo.follow_fork = o.follow_fork;
  mo.follow_exec = o.follow_exec;
  mo.single_step_only = o.single_step;
  mo.duration = o.duration;
  mo.stop_requested = &g_stop;

  Result<monitor::MonitorOutcome> outcome = Error{""};
  if (o.pid != 0) {
    install_attach_signals();
    outcome = monitor::monitor_attach(o.pid, mo);
    itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
  } else {
    auto program = resolve_program(o.command[0]);
    if (!program) return fail(cmd, program.error(), 127);
    // The terminal sends SIGINT/SIGQUIT to the program as well; it decides, we report.
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    outcome = monitor::monitor_program(*program, o.command, mo);
  }
  if (!outcome) return fail(cmd, outcome.error(), o.pid != 0 ? 1 : 127);
  for (const std::string& w : outcome->warnings) warn(cmd, w);

  monitor::RenderOptions ro;
  ro.timing = o.timing;
  ro.all = o.all;
  ro.histogram = o.histogram;
  analysis::parse_name_style(o.demangle, ro.names);
  std::string text = o.format == "json" ? monitor::render_json(*outcome)
                     : o.lines          ? monitor::render_line_listing(*outcome, ro)
                                        : monitor::render_function_table(*outcome, ro);
  if (out) {
    out->write(text);
    if (int status = out->finish()) return status;
  } else {
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  return o.pid != 0 ? 0 : outcome->status;
}

void setup_monitor(CLI::App& app, int& status) {
  auto o = std::make_shared<MonitorCmdOptions>();
  CLI::App* sub = app.add_subcommand(
      "monitor", "Count function (or line) hits of an unmodified program with breakpoints");
  CLI::Option* fn = sub->add_flag("--functions", o->functions,
                                  "breakpoints at function entries (the default)");
  sub->add_flag("--lines", o->lines, "breakpoints at every statement start (DWARF line table)")
      ->excludes(fn);
  sub->add_option("--select", o->select,
                  "monitor only these units: glob patterns on function names, source files, or "
                  "FILE:LINE (then every module is searched, system libraries included)")
      ->type_name("PATTERN")
      ->expected(1, -1);
  sub->add_flag("--one-shot", o->one_shot,
                "remove each breakpoint at its first hit: coverage at near-native speed");
  sub->add_flag("--timing", o->timing,
                "time each function with a breakpoint on its return address (total and self)");
  sub->add_flag("--histogram", o->histogram, "with --lines: a bar scaled to the largest count");
  sub->add_flag("--all", o->all, "also list units that were never hit");
  sub->add_flag("--all-modules", o->all_modules,
                "also monitor system libraries and the dynamic linker");
  sub->add_flag("--follow-fork", o->follow_fork, "monitor forked children too");
  sub->add_flag("--follow-exec", o->follow_exec, "keep monitoring the new image after exec");
  sub->add_flag("--single-step", o->single_step,
                "never emulate the displaced instruction (naive re-arm; for comparison)");
  sub->add_option("-o,--output", o->output, "write the report to FILE ('-': standard output; default: standard error, apart "
                  "from the program's own output)")
      ->type_name("FILE");
  add_demangle_option(sub, o->demangle);
  sub->add_option("--format", o->format, "text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->add_option("-p,--pid", o->pid, "attach to running process PID (detach on SIGINT)")
      ->type_name("PID");
  sub->add_option("--duration", o->duration, "with -p: detach after SECONDS")
      ->type_name("SECONDS")
      ->check(CLI::PositiveNumber);
  add_program_option(sub, o->command, "PROG [ARGS...] (put -- before PROG)", false);
  sub->footer(
      "Examples: callmon monitor -- ./prog args\n"
      "          callmon monitor --lines --select 'prog.c' --histogram -- ./prog\n"
      "          callmon monitor -p 1234 --duration 5 --format json -o counts.json\n"
      "The program keeps its stdin, stdout, stderr and signals; callmon exits with its status "
      "(128+signal if it was killed).");
  sub->callback([o, &status] { status = run_monitor(*o); });
}

const CommandRegistration registration_monitor("monitor", setup_monitor);

}  // namespace
}  // namespace callmon::tools
