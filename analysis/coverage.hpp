// Function coverage (docs/coverage.md): every function of the instrumented modules a set of
// recordings ran, with how often it was called, the never-called ones included. The list of
// functions comes from the modules' code (instrumented_code.hpp), not from the calls, so a
// function no test reached still shows up; calls are merged by module path and ELF address,
// so recordings of different runs (different load addresses) add up.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/thread_problems.hpp"
#include "format/recording.hpp"
#include "format/result.hpp"

namespace callmon::analysis {

struct CoverageFunction {
  std::string name;  // demangled
  std::string file;  // source file from DWARF, empty if unknown
  uint32_t line = 0;
  uint64_t vaddr = 0;  // in its module (the lowest of its variants)
  uint64_t calls = 0;  // of all its variants
  // Out-of-line copies of one source function merged into this row: a constructor's or
  // destructor's complete-, base-object and deleting variants (C1/C2, D0/D1/D2) demangle
  // alike. 1 for an ordinary function.
  uint32_t variants = 1;
  // No call entered its own copy, but DWARF says its body was inlined into `inlined_into`
  // (one of them, demangled), which was called: it may well have run there, unseen (-pg and
  // -mfentry put no probe in inlined code). Neither called nor missed.
  bool inlined_only = false;
  std::string inlined_into;
};

struct CoverageModule {
  std::string path;
  // By source file, line, then name; one row per source function (variants merged).
  std::vector<CoverageFunction> functions;
};

struct Coverage {
  std::vector<CoverageModule> modules;  // by path
  uint64_t recordings = 0;
  uint64_t processes = 0;
  std::vector<std::string> warnings;  // unreadable modules, damaged thread files
};

// The calls one process made: how many times each runtime address was entered, and the
// modules it had mapped (to turn addresses into module paths and ELF addresses).
struct ProcessCalls {
  std::vector<format::ModuleRecord> modules;
  std::unordered_map<uint64_t, uint64_t> counts;  // runtime address -> calls
  // The functions `record --patch` patched (the meta file's `patch-fn` lines): module path,
  // ELF address, symbol. Their modules are listed as the instrumented ones are.
  struct Patched {
    std::string path;
    uint64_t vaddr = 0;
    std::string name;
  };
  std::vector<Patched> patched;
};

// The coverage of the instrumented modules the processes mapped, from their calls; the
// warnings so far are kept. `recordings` is only counted into Coverage::recordings.
Coverage coverage_from_calls(const std::vector<ProcessCalls>& processes, uint64_t recordings,
                             std::vector<std::string> warnings);

// Counts the calls of every instrumented function of the modules mapped by the processes of
// `recordings` (their ENTER records). The runtime itself (libcallmon) is left out. Errors: a thread file that
// cannot be opened. `progress` as in profile_builder.hpp (may be empty).
Result<Coverage> compute_coverage(const std::vector<format::Recording>& recordings,
                                  const ProgressFn& progress);

// The calls of the processes in `recordings`, as compute_coverage counts them (for merging
// with calls counted live, tools/coverage). Warnings about damaged files go to `warnings`.
Result<std::vector<ProcessCalls>> recorded_calls(const std::vector<format::Recording>& recordings,
                                                 const ProgressFn& progress,
                                                 std::vector<std::string>& warnings);

}  // namespace callmon::analysis
