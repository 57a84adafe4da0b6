// demangle(): C++ symbol names as people read them, through the C++ runtime's demangler
// (abi::__cxa_demangle, the same code as c++filt). C names pass through unchanged.
#include <cxxabi.h>

#include <cstdlib>
#include <string>

#include "analysis/symbolizer.hpp"

namespace callmon::analysis {

std::string demangle(const std::string& symbol) {
  // Only Itanium-ABI names ("_Z...") are mangled; anything else (C functions, "main") is
  // returned as is without asking the demangler, which would misread names like "f".
  if (symbol.size() < 3 || symbol[0] != '_' || symbol[1] != 'Z') return symbol;
  // A symbol version ("_ZN...@@GLIBCXX_3.4", seen in static binaries) is not part of the
  // mangling: demangle the name and keep the version as a suffix.
  size_t at = symbol.find('@');
  std::string mangled = symbol.substr(0, at);
  int status = 0;
  char* out = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return symbol;
  }
  std::string result(out);
  std::free(out);
  if (at != std::string::npos) result += symbol.substr(at);
  return result;
}

namespace {
bool g_mangled_names = false;  // --demangle=no, set by the command line before analysis
}  // namespace

void set_mangled_names(bool on) { g_mangled_names = on; }

std::string symbol_name(const std::string& symbol) {
  return g_mangled_names ? symbol : demangle(symbol);
}

}  // namespace callmon::analysis
