// `callmon trace [options] -- PROG [ARGS...]`: runs PROG under the trace monitor
// (tools/trace/trace_monitor.cpp), which prints every instrumented call as it happens;
// exits with PROG's status (docs/trace.md).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>

#include "tools/callmon/command.hpp"
#include "tools/callmon/program_args.hpp"
#include "tools/callmon/monitor_launch.hpp"
#include "tools/callmon/name_option.hpp"
#include "tools/callmon/privileged_program.hpp"
#include "tools/callmon/program_launch.hpp"
#include "tools/callmon/patch_options.hpp"

namespace callmon::tools {
namespace {

namespace fs = std::filesystem;

struct TraceOptions {
  std::string output;      // -o FILE; empty: standard error
  std::string output_dir;  // --output-dir DIR: one file per thread
  bool timestamps = false;
  bool shared = false;      // --shared: files readable by everyone (0644, dir 0755)
  bool durations = false;
  std::string include;
  std::string exclude;
  std::string demangle = "short";
  uint64_t max_depth = 0;
  int64_t thread = 0;
  PatchOptions patching;  // --patch, --patch-module: unmodified code traced too
  std::vector<std::string> command;
};

// Checks a --include/--exclude regex as the monitor will compile it.
Status check_regex(const std::string& option, const std::string& text) {
  try {
    std::regex re(text, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Error{option + ": bad regex '" + text + "': " + e.what()};
  }
  return ok_status();
}

int run_trace(const TraceOptions& o) {
  const std::string cmd = "trace";
  if (o.command.empty()) return fail(cmd, "no program given: callmon trace [options] -- PROG [ARGS...]", 2);
  if (!o.output.empty() && !o.output_dir.empty())
    return fail(cmd, "-o and --output-dir exclude each other", 2);
  for (auto& [opt, text] : {std::pair{"--include", o.include}, std::pair{"--exclude", o.exclude}})
    if (!text.empty())
      if (auto st = check_regex(opt, text); !st) return fail(cmd, st.error(), 2);
  if (auto bad = patch_options_error(o.patching)) return fail(cmd, *bad, 2);
  auto program = resolve_program(o.command[0]);
  if (!program) return fail(cmd, program.error(), 127);
  if (auto refused = preload_refusal(*program, o.command[0])) return fail(cmd, *refused);
  auto runtime = find_runtime();
  if (!runtime) return fail(cmd, runtime.error());
  auto monitor = find_callmon_library("callmon-trace.so", "CALLMON_TRACE_LIB");
  if (!monitor) return fail(cmd, monitor.error());

  MonitorOptions mo;
  std::error_code ec;
  if (!o.output_dir.empty()) {
    fs::create_directories(o.output_dir, ec);
    // Private unless --shared (docs/security.md); an existing directory is only narrowed.
    if (!ec) {
      const auto wanted = o.shared ? fs::perms(0755) : fs::perms(0700);
      fs::permissions(o.output_dir, fs::status(o.output_dir, ec).permissions() & wanted,
                      fs::perm_options::replace, ec);
      ec.clear();
    }
    if (ec || !fs::is_directory(o.output_dir) || access(o.output_dir.c_str(), W_OK) != 0)
      return fail(cmd, o.output_dir + ": cannot create or write the directory" +
                           (ec ? ": " + ec.message() : ""));
    mo.emplace_back("dir", fs::absolute(o.output_dir).string());
  } else {
    auto fd = inheritable_output(o.output, "the trace output", o.shared ? 0644 : 0600);
    if (!fd) return fail(cmd, fd.error());
    mo.emplace_back("fd", std::to_string(*fd));
  }
  if (o.timestamps) mo.emplace_back("timestamps", "1");
  if (o.durations) mo.emplace_back("durations", "1");
  if (!o.include.empty()) mo.emplace_back("include", o.include);
  if (!o.exclude.empty()) mo.emplace_back("exclude", o.exclude);
  mo.emplace_back("demangle", o.demangle);
  if (o.max_depth) mo.emplace_back("max_depth", std::to_string(o.max_depth));
  if (o.thread) mo.emplace_back("thread", std::to_string(o.thread));
  auto env = monitor_env(*runtime, *monitor, mo);
  if (!env) return fail(cmd, env.error(), 2);
  add_patch_env(o.patching, *env);
  auto ended = run_program(*program, o.command, *env);
  if (!ended) return fail(cmd, ended.error(), 127);
  return ended->status;
}

CommandRegistration registration_trace{"trace", [](CLI::App& app, int& status) {
  auto* sub = app.add_subcommand("trace", "Run a program and print every instrumented call as it happens");
  auto o = std::make_shared<TraceOptions>();
  sub->add_option("-o,--output", o->output, "Write the trace to FILE (default: standard error)");
  sub->add_flag("--shared", o->shared,
                "Let everyone read the -o file (0644) or --output-dir files (directory 0755); "
                "without it they are readable by you only (0600, 0700)");
  sub->add_option("--output-dir", o->output_dir,
                  "Write one file per thread, DIR/trace.PID.TID (created if missing)");
  sub->add_flag("--timestamps", o->timestamps, "Start each line with the seconds since the trace began");
  sub->add_flag("--durations", o->durations,
                "Print each call's duration on its exit line (a call without callees on one line)");
  sub->add_option("--include", o->include, "Show only calls whose demangled name matches REGEX");
  sub->add_option("--exclude", o->exclude, "Hide calls whose demangled name matches REGEX");
  add_demangle_option(sub, o->demangle);
  sub->add_option("--max-depth", o->max_depth, "Show only calls at most N deep (main is depth 1)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 22));
  sub->add_option("--thread", o->thread, "Show only the thread with this kernel thread id")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 31));
  add_patch_options(sub, o->patching, "trace them");
  add_program_option(sub, o->command, "PROG [ARGS...] (put -- before PROG)", true);
  sub->footer("Example: callmon trace --durations -- ./fib 10\n"
              "An unmodified program: callmon trace --patch=. -- ./prog\n"
              "Lines are written as they happen (one write per line), so a program that "
              "crashes or hangs still shows its last calls. The program keeps its stdin, "
              "stdout, stderr and signals; callmon exits with its status (128+signal if it "
              "was killed).");
  sub->callback([o, &status] { status = run_trace(*o); });
}};

}  // namespace
}  // namespace callmon::tools
