// add_patch_options(), patch_options_error(), add_patch_env(): patch_options.hpp.
#include "tools/callmon/patch_options.hpp"

#include <regex.h>

namespace callmon::tools {
namespace {

// An expression regcomp would reject, named with its option; nullopt when it compiles.
std::optional<std::string> posix_regex_error(const std::string& text, const char* option) {
  if (text.empty()) return std::nullopt;
  regex_t re;
  int rc = regcomp(&re, text.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc == 0) {
    regfree(&re);
    return std::nullopt;
  }
  char msg[256];
  regerror(rc, &re, msg, sizeof msg);
  return std::string(option) + " '" + text + "': " + msg + " (POSIX extended syntax)";
}

}  // namespace

void add_patch_options(CLI::App* sub, PatchOptions& o, const std::string& purpose) {
  sub->add_option("--patch", o.patch,
                  "Patch the entries of the functions of unmodified code whose symbol name "
                  "matches REGEX (POSIX ERE, searched; '.': all) to " + purpose +
                  " (docs/patching.md)")
      ->type_name("REGEX");
  sub->add_option("--patch-module", o.patch_module,
                  "With --patch: also patch the shared libraries (and dlopen'ed modules) whose "
                  "path matches REGEX; the executable always")
      ->type_name("REGEX");
}

std::optional<std::string> patch_options_error(const PatchOptions& o) {
  if (auto bad = posix_regex_error(o.patch, "--patch")) return bad;
  if (auto bad = posix_regex_error(o.patch_module, "--patch-module")) return bad;
  if (o.patch.empty() && !o.patch_module.empty())
    return std::string("--patch-module needs --patch (which functions)");
  return std::nullopt;
}

void add_patch_env(const PatchOptions& o, std::vector<std::string>& env) {
  if (!o.patch.empty()) env.push_back("CALLMON_PATCH=" + o.patch);
  if (!o.patch_module.empty()) env.push_back("CALLMON_PATCH_MODULE=" + o.patch_module);
}

}  // namespace callmon::tools
