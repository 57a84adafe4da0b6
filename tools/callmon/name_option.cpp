// --demangle for text outputs (name_option.hpp).
#include "tools/callmon/name_option.hpp"

#include "report/shown_names.hpp"

namespace callmon::tools {

void add_demangle_option(CLI::App* sub, std::string& value) {
  value = "short";
  sub->add_option("--demangle", value,
                  "how function names are shown: short (default: no parameters, template "
                  "arguments elided, no return type), full, or no (mangled)")
      ->check(CLI::IsMember({"full", "short", "no"}));
}

void apply_demangle_option(const std::string& value) {
  analysis::NameStyle style = analysis::NameStyle::short_form;
  analysis::parse_name_style(value, style);
  report::set_name_style(style);
}

}  // namespace callmon::tools
