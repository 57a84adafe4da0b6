// idle_rule_warnings() (inject_rule_check.hpp): matches each rule's regex, as the injection
// monitor does (searched in the demangled name), against the program's hooked functions,
// then its other function symbols, then the functions DWARF shows inlined.
#include "tools/callmon/inject_rule_check.hpp"

#include <regex>
#include <unordered_set>

#include "analysis/elf_image.hpp"
#include "analysis/inlined_code.hpp"
#include "analysis/instrumented_code.hpp"
#include "analysis/symbolizer.hpp"

namespace callmon::tools {
namespace {

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The first of `names` the regex finds something in, or nullptr.
const std::string* first_match(const std::regex& re, const std::vector<std::string>& names) {
  for (const std::string& n : names)
    if (std::regex_search(n, re)) return &n;
  return nullptr;
}

}  // namespace

std::vector<std::string> idle_rule_warnings(const std::vector<inject::Rule>& rules,
                                            const std::string& program,
                                            const std::string& config) {
  std::vector<std::string> out;
  auto hooked_found = analysis::instrumented_functions(program);
  auto image = analysis::ElfImage::open(program);
  if (!hooked_found || !image) return out;
  std::vector<std::string> hooked, unhooked, inlined;
  std::unordered_set<uint64_t> hooked_at;
  for (const auto& f : *hooked_found) {
    hooked.push_back(analysis::demangle(f.name));
    hooked_at.insert(f.vaddr);
  }
  for (const auto& s : (*image)->symbols())
    if (!hooked_at.count(s.start)) unhooked.push_back(analysis::demangle(s.name));
  bool inlined_read = false;
  const std::string prog = base_name(program);
  for (const inject::Rule& r : rules) {
    std::regex re;
    try {
      re.assign(r.pattern, std::regex::ECMAScript);
    } catch (const std::regex_error&) {
      continue;  // load_config refused it already
    }
    if (first_match(re, hooked)) continue;
    const std::string where = config + ":" + std::to_string(r.line) + ": rule '" + r.pattern + "'";
    if (!inlined_read) {  // DWARF only when a rule needs it
      inlined_read = true;
      for (const auto& f : analysis::inlined_functions(**image))
        inlined.push_back(f.linkage_name.empty() ? f.name : analysis::demangle(f.linkage_name));
    }
    if (const std::string* name = first_match(re, inlined)) {
      out.push_back(where + " matches only inlined copies of " + *name + " in " + prog +
                    ", which have no callmon hook of their own: nothing will be injected; "
                    "keep it out of line (__attribute__((noinline)) or -fno-inline)");
    } else if (const std::string* name = first_match(re, unhooked)) {
      out.push_back(where + " matches " + *name + " in " + prog +
                    ", which has no callmon hook (its file was built without "
                    "-finstrument-functions or -pg): nothing will be injected there");
    } else {
      out.push_back(where + " matches no function of " + prog +
                    "; it can only act on the instrumented shared libraries it loads");
    }
  }
  return out;
}

}  // namespace callmon::tools
