// The execution monitor's public interface: run a program (or attach to a running process)
// under ptrace with int3 breakpoints at the entries of its functions or the starts of its
// source statements, and return hit counts (and, with timing, times) per unit, per thread.
// No recompiling: units come from the ELF symbol tables and DWARF line tables.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "format/result.hpp"

namespace callmon::monitor {

struct MonitorOptions {
  bool lines = false;                // statement starts (DWARF) instead of function entries
  std::vector<std::string> select;   // glob patterns: function, file, or file:line; empty: all
  bool all_modules = false;          // also system libraries (/lib, /usr/lib) without --select
  bool one_shot = false;             // remove each breakpoint at its first hit (coverage)
  bool timing = false;               // return breakpoints: total and self time per function
  bool follow_fork = false;          // count in forked children too (else they run untraced)
  bool follow_exec = false;          // keep monitoring after exec (else detach at exec)
  bool single_step_only = false;     // never emulate: the naive re-arm, for benchmarks
  double duration = 0;               // attach mode: detach after this many seconds (0: never)
  // Set asynchronously (SIGINT) to end an attach session; checked whenever waitpid is
  // interrupted, so the caller should also arrange a periodic signal (see cmd_monitor.cpp).
  const volatile std::sig_atomic_t* stop_requested = nullptr;
};

// What a unit is: a function (line is its declaration line) or a source line.
struct Unit {
  std::string name;    // demangled function name; for a line unit the function holding it
  std::string module;  // path of the ELF file
  std::string file;    // source file, empty when there is no DWARF
  uint32_t line = 0;
  uint64_t address = 0;  // ELF virtual address of the (first) breakpoint of the unit
  std::string symbol;    // the function's name as the symbol table spells it (mangled)
};

struct ThreadCount {
  pid_t tid = 0;
  uint64_t hits = 0;
};

struct UnitResult {
  Unit unit;
  uint64_t hits = 0;
  uint64_t total_ns = 0;  // --timing: inclusive time of outermost activations
  uint64_t self_ns = 0;   // --timing: minus the time of timed callees
  std::vector<ThreadCount> threads;  // threads that hit it
};

// The counts of one process image: a process, or the part of it before or after an exec.
struct ImageResult {
  pid_t pid = 0;
  std::string exe;
  std::string end;  // how monitoring ended: "exit 0", "signal SIGSEGV", "detached", "exec"
  std::vector<UnitResult> units;  // every selected unit, hit or not, in address order
  size_t threads = 0;
  uint64_t stops = 0;      // breakpoint stops handled
  uint64_t emulated = 0;   // of which resumed by emulating the displaced instruction
  uint64_t stepped = 0;    // of which resumed by single-stepping it
  uint64_t breakpoints = 0;
};

struct MonitorOutcome {
  std::vector<ImageResult> images;
  int status = 0;          // the program's exit status, 128+signal when killed; 0 if detached
  int signal = 0;
  bool detached = false;
  std::vector<std::string> warnings;  // one sentence each
};

// Runs `path` with `args` (args[0] is argv[0]) in the monitor's environment and monitors it
// until it ends. Errors: fork or ptrace failed, the program could not be executed.
Result<MonitorOutcome> monitor_program(const std::string& path,
                                       const std::vector<std::string>& args,
                                       const MonitorOptions& options);

// Attaches to every thread of running process `pid`, monitors until stop_requested is set or
// the duration passes (or the process ends), then removes every breakpoint and detaches,
// leaving the process running. Errors: no such process, not permitted to trace it.
Result<MonitorOutcome> monitor_attach(pid_t pid, const MonitorOptions& options);

}  // namespace callmon::monitor
