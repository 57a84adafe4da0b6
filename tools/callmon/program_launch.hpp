// Starting the recorded program: resolving it on PATH and checking it is something exec can
// run, building its environment, and running it as a child whose exit status and signals
// callmon passes on unchanged.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "format/result.hpp"

namespace callmon::tools {

// Resolves `name` like execvp would (PATH search when it has no '/') and checks that it is
// an executable regular file holding an ELF image or a #! script. Errors are one sentence
// naming the program.
Result<std::string> resolve_program(const std::string& name);

// How the child ended, as a shell would report it.
struct ChildExit {
  int status = 0;  // exit code, or 128+signal
  int signal = 0;  // the signal that killed it, 0 if it exited
};

// Runs `path` with `args` (args[0] is argv[0]) and `env`, waits for it and returns how it
// ended. While it runs, SIGINT and SIGQUIT are ignored here (the terminal delivers them to
// the child, which decides) and SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 are forwarded to it.
// `before_exec`, when given, runs here with the child's pid while the child waits before
// its exec (what must see the program from its first instruction: the scheduler recorder).
// Errors: fork failed, exec failed (reported through a close-on-exec pipe).
Result<ChildExit> run_program(const std::string& path, const std::vector<std::string>& args,
                              const std::vector<std::string>& env,
                              const std::function<void(pid_t)>& before_exec = {});

// `name` (e.g. "libcallmon.so", "callmon-trace.so") in the library directory next to this
// executable: <prefix>/bin/callmon -> <prefix>/lib/NAME (the build tree and `cmake
// --install` share that layout). The environment variable `override_env`, when set, names
// the file instead. Errors: one sentence naming what is missing.
Result<std::string> find_callmon_library(const std::string& name, const char* override_env);

// The runtime, libcallmon.so (CALLMON_LIB overrides).
Result<std::string> find_runtime();

// callmon's own environment without CALLMON_* variables (a stray CALLMON_DIR would turn
// recording on): what a program run without the runtime gets.
std::vector<std::string> env_without_callmon();

// The environment a program gets under callmon: env_without_callmon() with
// LD_PRELOAD=<runtime> in front of any LD_PRELOAD already set. The caller appends its
// CALLMON_* variables.
std::vector<std::string> preload_env(const std::string& runtime);

}  // namespace callmon::tools
