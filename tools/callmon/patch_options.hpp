// --patch and --patch-module (docs/patching.md, "Entry patching"): one definition for the
// commands that start a program with the runtime, `record` and the monitors' `trace`, `run`
// and `coverage`. The runtime reads them from CALLMON_PATCH and CALLMON_PATCH_MODULE and
// matches them with POSIX extended regular expressions (it has no C++ library).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace callmon::tools {

struct PatchOptions {
  std::string patch;         // functions of unmodified code to patch, or empty
  std::string patch_module;  // the shared libraries patched too, or empty
};

// Adds both options to `sub`; `purpose` ends --patch's help ("record them", "trace them").
void add_patch_options(CLI::App* sub, PatchOptions& o, const std::string& purpose);

// One line saying what is wrong: an expression the runtime would reject (named with its
// option), or --patch-module without --patch. nullopt when both are fine.
std::optional<std::string> patch_options_error(const PatchOptions& o);

// CALLMON_PATCH=... and CALLMON_PATCH_MODULE=... appended to `env` for those given.
void add_patch_env(const PatchOptions& o, std::vector<std::string>& env);

}  // namespace callmon::tools
