// The error simulator's configuration (docs/inject.md): one rule per line, naming which
// calls to act on (a regex on the demangled function name and a trigger) and what to do
// (throw a standard exception, return a value, set errno). This file is the syntax only:
// it is read by `callmon inject` before the program starts (so a bad line is an error that
// names the file and line) and again by the injection monitor inside the program.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/result.hpp"

namespace callmon::inject {

enum class Trigger {
  kEvery,        // every call
  kNth,          // only call number n (1-based)
  kFirst,        // calls 1..n
  kProbability,  // each call with probability p, decided by (seed, call number)
};

enum class Action {
  kThrow,   // throw `exception` from the function's entry, its body does not run
  kReturn,  // return `value` without running the body (-pg -mfentry only)
  kErrno,   // let the function run, then set errno to `error_number` as it returns
};

enum class Exception { kRuntimeError, kLogicError, kBadAlloc, kSystemError };

struct Rule {
  unsigned line = 0;    // line in the config file (1-based)
  std::string pattern;  // ECMAScript regex, searched anywhere in the demangled name
  Trigger trigger = Trigger::kEvery;
  uint64_t n = 0;             // kNth, kFirst
  double probability = 0;     // kProbability: 0 < p <= 1
  uint64_t seed = 0;          // kProbability
  Action action = Action::kThrow;
  Exception exception = Exception::kRuntimeError;
  int error_number = 0;       // kSystemError's code, kErrno's value
  std::string message;        // the exception's what() (system_error: the prefix)
  int64_t value = 0;          // kReturn: the value put in rax
};

// Parses a whole config. `file` only names the source in errors, which read
// "FILE:LINE: what is wrong". A config without rules is an error (nothing to inject).
Result<std::vector<Rule>> parse_config(const std::string& text, const std::string& file);

// Reads and parses the file at `path`. Errors: unreadable file, or parse_config's.
Result<std::vector<Rule>> load_config(const std::string& path);

// A one-line description of the rule for the injection log, e.g.
// "line 3: open_db call=3 throw system_error ENOENT".
std::string describe(const Rule& rule);

// The errno value named `name` ("ENOENT", or a decimal number), or 0 if it names none.
int errno_from_name(const std::string& name);
// "ENOENT" for 2; the number as text when it has no name.
std::string errno_name(int value);

}  // namespace callmon::inject
